package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMemoryStoreKeepsTwoWindows checks the memory bound: after the clock
// has crossed many minutes, only the newest window and the one before remain.
func TestMemoryStoreKeepsTwoWindows(t *testing.T) {
	start := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		minutes     int
		wantWindows []int64
	}{
		{name: "one window", minutes: 1, wantWindows: []int64{start.Unix()}},
		{name: "two windows", minutes: 2, wantWindows: []int64{start.Unix(), start.Add(time.Minute).Unix()}},
		{name: "many windows", minutes: 30, wantWindows: []int64{start.Add(28 * time.Minute).Unix(), start.Add(29 * time.Minute).Unix()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewMemoryStore()
			for m := range tc.minutes {
				for _, key := range []string{"a", "b", "c"} {
					_, err := s.Hit(context.Background(), key, start.Add(time.Duration(m)*time.Minute))
					require.NoError(t, err)
				}
			}
			var got []int64
			for w := range s.windows {
				got = append(got, w)
			}
			assert.ElementsMatch(t, tc.wantWindows, got)
		})
	}
}

func TestRetryAfter(t *testing.T) {
	window := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		now  time.Time
		want int
	}{
		{name: "start of the window", now: window, want: 60},
		{name: "mid-second rounds up", now: window.Add(10*time.Second + time.Millisecond), want: 50},
		{name: "last instant is at least 1", now: window.Add(Window - time.Nanosecond), want: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, retryAfter(tc.now, window))
		})
	}
}
