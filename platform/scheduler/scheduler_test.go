package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/scheduler"
)

// syncBuffer is a log sink safe for the scheduler's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newScheduler(t *testing.T, stopTimeout time.Duration) (*scheduler.Scheduler, *syncBuffer) {
	t.Helper()
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := scheduler.New(log, stopTimeout)
	require.NoError(t, err)
	return s, buf
}

// runLog records when a job ran.
type runLog struct {
	mu    sync.Mutex
	times []time.Time
}

func (r *runLog) add() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = append(r.times, time.Now())
}

func (r *runLog) list() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.times...)
}

func TestJobTiming(t *testing.T) {
	tests := []struct {
		name       string
		firstDelay time.Duration
		interval   time.Duration
		startAfter time.Duration // pause between Add and Start
		watch      time.Duration
		wantFirst  [2]time.Duration // bounds of the first run: the earliest from Add, the latest from Start
		wantMin    int
	}{
		{name: "first run after FirstDelay, then every interval", firstDelay: 200 * time.Millisecond,
			interval: 50 * time.Millisecond, watch: 600 * time.Millisecond,
			wantFirst: [2]time.Duration{180 * time.Millisecond, 400 * time.Millisecond}, wantMin: 4},
		{name: "no FirstDelay runs at Start", interval: time.Hour, watch: 300 * time.Millisecond,
			wantFirst: [2]time.Duration{0, 250 * time.Millisecond}, wantMin: 1},
		{name: "no FirstDelay runs at Start even when Start comes late", interval: time.Hour,
			startAfter: 30 * time.Millisecond, watch: 300 * time.Millisecond,
			wantFirst: [2]time.Duration{0, 250 * time.Millisecond}, wantMin: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newScheduler(t, time.Second)
			runs := &runLog{}
			added := time.Now() // FirstDelay counts from Add
			require.NoError(t, s.Add(scheduler.Job{Name: "tick", Interval: tc.interval, FirstDelay: tc.firstDelay,
				Run: func(context.Context) error { runs.add(); return nil }}))
			time.Sleep(tc.startAfter)
			started := time.Now()
			s.Start()
			time.Sleep(tc.watch)
			require.NoError(t, s.Stop())

			got := runs.list()
			require.GreaterOrEqual(t, len(got), tc.wantMin, "runs")
			assert.GreaterOrEqual(t, got[0].Sub(added), tc.wantFirst[0], "first run too early")
			assert.LessOrEqual(t, got[0].Sub(started), tc.wantFirst[1], "first run too late")
			if tc.interval < time.Hour {
				// Later runs follow the interval, not a tight loop.
				assert.LessOrEqual(t, len(got), int(tc.watch/tc.interval)+2, "too many runs")
			} else {
				assert.Len(t, got, 1, "the next run is an interval away")
			}
			n := len(got)
			time.Sleep(150 * time.Millisecond)
			assert.Len(t, runs.list(), n, "no run after Stop")
		})
	}
}

func TestNoOverlappingRuns(t *testing.T) {
	s, _ := newScheduler(t, time.Second)
	var running, maxRunning, runs atomic.Int64
	require.NoError(t, s.Add(scheduler.Job{Name: "slow", Interval: 10 * time.Millisecond, Run: func(ctx context.Context) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		runs.Add(1)
		select {
		case <-time.After(80 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}}))
	s.Start()
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, s.Stop())
	assert.Equal(t, int64(1), maxRunning.Load(), "at most one run at a time")
	assert.GreaterOrEqual(t, runs.Load(), int64(3), "the job kept running")
	assert.LessOrEqual(t, runs.Load(), int64(8), "skipped ticks are not queued up")
}

func TestStop(t *testing.T) {
	t.Run("cancels the job's context and waits for it", func(t *testing.T) {
		s, _ := newScheduler(t, 2*time.Second)
		inside := make(chan struct{})
		var finished atomic.Bool
		var sawCancel atomic.Bool
		require.NoError(t, s.Add(scheduler.Job{Name: "long", Interval: time.Hour, Run: func(ctx context.Context) error {
			close(inside)
			<-ctx.Done()
			sawCancel.Store(true)
			time.Sleep(100 * time.Millisecond) // finish the batch
			finished.Store(true)
			return ctx.Err()
		}}))
		s.Start()
		select {
		case <-inside:
		case <-time.After(2 * time.Second):
			t.Fatal("job did not start")
		}
		begin := time.Now()
		require.NoError(t, s.Stop())
		assert.True(t, sawCancel.Load(), "ctx cancelled")
		assert.True(t, finished.Load(), "Stop waited for the running batch")
		assert.GreaterOrEqual(t, time.Since(begin), 90*time.Millisecond)
	})
	t.Run("gives up after the stop timeout", func(t *testing.T) {
		s, _ := newScheduler(t, 100*time.Millisecond)
		inside, release := make(chan struct{}), make(chan struct{})
		t.Cleanup(func() { close(release) })
		require.NoError(t, s.Add(scheduler.Job{Name: "stubborn", Interval: time.Hour, Run: func(context.Context) error {
			close(inside)
			<-release // ignores its context
			return nil
		}}))
		s.Start()
		<-inside
		begin := time.Now()
		err := s.Stop()
		assert.Error(t, err, "Stop reports a batch that did not end in time")
		assert.Less(t, time.Since(begin), time.Second)
	})
	t.Run("before any run", func(t *testing.T) {
		s, _ := newScheduler(t, time.Second)
		var runs atomic.Int64
		require.NoError(t, s.Add(scheduler.Job{Name: "later", Interval: time.Hour, FirstDelay: time.Hour,
			Run: func(context.Context) error { runs.Add(1); return nil }}))
		s.Start()
		require.NoError(t, s.Stop())
		assert.Zero(t, runs.Load())
	})
}

func TestFailuresAreLoggedAndTheJobContinues(t *testing.T) {
	tests := []struct {
		name    string
		run     func() error
		wantLog []string
	}{
		{name: "error", run: func() error { return errors.New("smtp down") },
			wantLog: []string{"job failed", "job=flaky", "smtp down"}},
		{name: "panic", run: func() error { panic("nil map") },
			wantLog: []string{"job panicked", "job=flaky", "nil map"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, logs := newScheduler(t, time.Second)
			var runs atomic.Int64
			require.NoError(t, s.Add(scheduler.Job{Name: "flaky", Interval: 20 * time.Millisecond, Run: func(context.Context) error {
				runs.Add(1)
				return tc.run()
			}}))
			s.Start()
			deadline := time.Now().Add(2 * time.Second)
			for runs.Load() < 3 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			require.NoError(t, s.Stop())
			assert.GreaterOrEqual(t, runs.Load(), int64(3), "the job keeps running after a failure")
			for _, want := range tc.wantLog {
				assert.Contains(t, logs.String(), want)
			}
		})
	}
}

func TestAddRejectsInvalidJobs(t *testing.T) {
	run := func(context.Context) error { return nil }
	tests := []struct {
		name    string
		job     scheduler.Job
		wantErr bool
	}{
		{name: "valid", job: scheduler.Job{Name: "ok", Interval: time.Minute, Run: run}},
		{name: "valid with first delay", job: scheduler.Job{Name: "ok", Interval: time.Minute, FirstDelay: time.Second, Run: run}},
		{name: "no name", job: scheduler.Job{Interval: time.Minute, Run: run}, wantErr: true},
		{name: "zero interval", job: scheduler.Job{Name: "x", Run: run}, wantErr: true},
		{name: "negative interval", job: scheduler.Job{Name: "x", Interval: -time.Second, Run: run}, wantErr: true},
		{name: "no Run", job: scheduler.Job{Name: "x", Interval: time.Minute}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newScheduler(t, time.Second)
			t.Cleanup(func() { _ = s.Stop() })
			err := s.Add(tc.job)
			if tc.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "needs a name, a positive interval and a Run")
				return
			}
			require.NoError(t, err)
		})
	}
}
