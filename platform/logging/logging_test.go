package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/clock"
)

func TestNew(t *testing.T) {
	cases := []struct {
		name        string
		level       string
		production  bool
		withDir     bool
		wantJSON    bool
		wantFile    bool
		wantDebug   bool
		wantErr     bool
		wantRotator bool
	}{
		{name: "development writes text to stdout", level: "info"},
		{name: "development ignores the log folder", level: "info", withDir: true},
		{name: "development at debug", level: "debug", wantDebug: true},
		{name: "production writes JSON to stdout", level: "info", production: true, wantJSON: true},
		{name: "production writes JSON to stdout and the file", level: "info", production: true, withDir: true,
			wantJSON: true, wantFile: true, wantRotator: true},
		{name: "empty level means info", production: true, wantJSON: true},
		{name: "level is case-insensitive", level: "DEBUG", production: true, wantJSON: true, wantDebug: true},
		{name: "unknown level is an error", level: "verbose", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout bytes.Buffer
			dir := ""
			if tc.withDir {
				dir = filepath.Join(t.TempDir(), "logs")
			}
			log, rot, err := New(tc.level, tc.production, dir, 30, &stdout)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, rot.Close()) })
			assert.Equal(t, tc.wantRotator, rot != nil)

			log.Debug("debug line")
			log.Info("hello", "requestId", "r-1", "n", 3)

			out := stdout.String()
			assert.Equal(t, tc.wantDebug, strings.Contains(out, "debug line"))
			if tc.wantJSON {
				rec := lastJSON(t, out)
				assert.Equal(t, "hello", rec["msg"])
				assert.Equal(t, "INFO", rec["level"])
				assert.Equal(t, "r-1", rec["requestId"])
				assert.EqualValues(t, 3, rec["n"])
			} else {
				assert.Contains(t, out, "level=INFO msg=hello requestId=r-1 n=3")
				assert.False(t, json.Valid([]byte(lastLine(out))), "text, not JSON")
			}

			file := filepath.Join(dir, FileName)
			if !tc.wantFile {
				if dir != "" {
					assert.NoFileExists(t, file)
				}
				return
			}
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			rec := lastJSON(t, string(data))
			assert.Equal(t, "hello", rec["msg"])
			assert.Equal(t, "r-1", rec["requestId"])
		})
	}
}

func TestNewFailsOnAnUnwritableFolder(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	_, _, err := New("info", true, filepath.Join(blocker, "logs"), 30, &bytes.Buffer{})
	require.Error(t, err, "a log folder below a regular file cannot be created")
}

func TestRotator(t *testing.T) {
	day1 := time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC)
	cases := []struct {
		name        string
		advance     time.Duration
		wantRotated bool
	}{
		{name: "same UTC day keeps the file", advance: 59 * time.Second},
		{name: "next UTC day rolls the file", advance: 61 * time.Second, wantRotated: true},
		{name: "several days later rolls once", advance: 72 * time.Hour, wantRotated: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := clock.NewManual(day1)
			log, rot, err := newLogger("info", true, dir, 30, &bytes.Buffer{}, clk)
			require.NoError(t, err)
			t.Cleanup(func() { _ = rot.Close() })
			job := rot.Job()
			assert.Equal(t, time.Minute, job.Interval)
			assert.NotEmpty(t, job.Name)

			log.Info("before")
			require.NoError(t, job.Run(context.Background()))
			assert.Empty(t, backups(t, dir), "no roll within the day")

			clk.Advance(tc.advance)
			require.NoError(t, job.Run(context.Background()))
			log.Info("after")

			current, err := os.ReadFile(filepath.Join(dir, FileName))
			require.NoError(t, err)
			rolled := backups(t, dir)
			if !tc.wantRotated {
				assert.Empty(t, rolled)
				assert.Contains(t, string(current), `"msg":"before"`)
				assert.Contains(t, string(current), `"msg":"after"`)
				return
			}
			require.Len(t, rolled, 1)
			old, err := os.ReadFile(rolled[0])
			require.NoError(t, err)
			assert.Contains(t, string(old), `"msg":"before"`)
			assert.NotContains(t, string(old), `"msg":"after"`)
			assert.NotContains(t, string(current), `"msg":"before"`)
			assert.Contains(t, string(current), `"msg":"after"`)

			// The next check on the same day does not roll again.
			require.NoError(t, job.Run(context.Background()))
			assert.Len(t, backups(t, dir), 1)
		})
	}
}

// TestRotatorRollsAFileLeftFromAnEarlierDay covers a restart: a file whose
// entries are from yesterday is rolled at the first check, not continued.
func TestRotatorRollsAFileLeftFromAnEarlierDay(t *testing.T) {
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		modified    time.Time
		wantRotated bool
	}{
		{name: "file from yesterday", modified: now.Add(-24 * time.Hour), wantRotated: true},
		{name: "file from earlier today", modified: now.Add(-time.Hour)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			require.NoError(t, os.WriteFile(path, []byte(`{"msg":"earlier run"}`+"\n"), 0o600))
			require.NoError(t, os.Chtimes(path, tc.modified, tc.modified))

			_, rot, err := newLogger("info", true, dir, 30, &bytes.Buffer{}, clock.NewManual(now))
			require.NoError(t, err)
			t.Cleanup(func() { _ = rot.Close() })
			require.NoError(t, rot.Job().Run(context.Background()))
			if tc.wantRotated {
				assert.Len(t, backups(t, dir), 1)
			} else {
				assert.Empty(t, backups(t, dir))
			}
		})
	}
}

// TestRotatorDeletesExpiredFiles checks that rolling removes rolled files
// older than maxAgeDays (lumberjack does it in the background).
func TestRotatorDeletesExpiredFiles(t *testing.T) {
	dir := t.TempDir()
	expired := filepath.Join(dir, "contractflow-"+time.Now().UTC().AddDate(0, 0, -40).Format("2006-01-02T15-04-05.000")+".log")
	kept := filepath.Join(dir, "contractflow-"+time.Now().UTC().AddDate(0, 0, -5).Format("2006-01-02T15-04-05.000")+".log")
	for _, p := range []string{expired, kept} {
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
	}
	clk := clock.NewManual(time.Now())
	_, rot, err := newLogger("info", true, dir, 30, &bytes.Buffer{}, clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rot.Close() })
	clk.Advance(24 * time.Hour)
	require.NoError(t, rot.Job().Run(context.Background()))

	assert.Eventually(t, func() bool {
		_, err := os.Stat(expired)
		return os.IsNotExist(err)
	}, 5*time.Second, 20*time.Millisecond, "expired file removed")
	assert.FileExists(t, kept)
}

func TestNilRotatorCloses(t *testing.T) {
	var r *Rotator
	assert.NoError(t, r.Close())
}

// backups lists the rolled files in dir.
func backups(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "contractflow-*.log"))
	require.NoError(t, err)
	return m
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func lastJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lastLine(s)), &rec), lastLine(s))
	return rec
}
