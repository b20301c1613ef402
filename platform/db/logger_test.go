package db

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// The statement's text is asked for, and logged, only for an error (not
// "record not found") or a slow statement, or for every statement in
// GORM's Info mode.
func TestLoggerFormatsOnlyWhatItLogs(t *testing.T) {
	var buf bytes.Buffer
	l := newLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		l     logger.Interface
		took  time.Duration
		err   error
		wants bool
	}{
		{"fast", l, time.Millisecond, nil, false},
		{"not found", l, time.Millisecond, gorm.ErrRecordNotFound, false},
		{"error", l, time.Millisecond, errors.New("boom"), true},
		{"slow", l, slowQuery + time.Second, nil, true},
		{"fast in Info mode", l.LogMode(logger.Info), time.Millisecond, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf.Reset()
			asked := false
			tc.l.Trace(ctx, time.Now().Add(-tc.took), func() (string, int64) {
				asked = true
				return "SELECT 1", 1
			}, tc.err)
			assert.Equal(t, tc.wants, asked, "statement text asked for")
			assert.Equal(t, tc.wants, bytes.Contains(buf.Bytes(), []byte("SELECT 1")), "logged: %s", buf.String())
		})
	}
}
