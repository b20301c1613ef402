// Package scheduler runs the modules' background jobs on fixed intervals,
// never two runs of one job at once, and stops them on shutdown.
package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/go-co-op/gocron/v2"
)

// Job is a recurring task declared by a module.
type Job struct {
	Name       string
	Interval   time.Duration
	FirstDelay time.Duration // wait before the first run
	// Run does one batch. Its context is cancelled when the service stops.
	Run func(ctx context.Context) error
}

// Scheduler wraps gocron with the service's conventions.
type Scheduler struct {
	s   gocron.Scheduler
	log *slog.Logger
}

// New returns a scheduler whose jobs log their failures to log. stopTimeout
// bounds how long Stop waits for a running batch.
func New(log *slog.Logger, stopTimeout time.Duration) (*Scheduler, error) {
	s, err := gocron.NewScheduler(gocron.WithStopTimeout(stopTimeout))
	if err != nil {
		return nil, err
	}
	return &Scheduler{s: s, log: log}, nil
}

// Add schedules job; it starts running once Start is called.
func (sc *Scheduler) Add(job Job) error {
	if job.Interval <= 0 || job.Run == nil || job.Name == "" {
		return fmt.Errorf("job %q needs a name, a positive interval and a Run", job.Name)
	}
	run := func(ctx context.Context) {
		started := time.Now()
		// gocron does not recover a task's panic by itself: without this, one
		// failing batch would take the whole service down.
		defer func() {
			if r := recover(); r != nil {
				sc.log.Error("job panicked", "job", job.Name, "panic", r, "duration", time.Since(started),
					"stack", string(debug.Stack()))
			}
		}()
		if err := job.Run(ctx); err != nil {
			sc.log.Error("job failed", "job", job.Name, "err", err, "duration", time.Since(started))
			return
		}
		sc.log.Debug("job done", "job", job.Name, "duration", time.Since(started))
	}
	// No first delay means "as soon as the scheduler starts". A start time
	// of now plus a millisecond was refused by gocron as "in the past" when
	// Add ran slowly, and pushed the first run a whole interval out when
	// Start came more than a millisecond after Add.
	start := gocron.WithStartImmediately()
	if job.FirstDelay > 0 {
		start = gocron.WithStartDateTimePast(time.Now().Add(job.FirstDelay))
	}
	_, err := sc.s.NewJob(
		gocron.DurationJob(job.Interval),
		gocron.NewTask(run),
		gocron.WithName(job.Name),
		gocron.WithSingletonMode(gocron.LimitModeReschedule),
		gocron.WithStartAt(start),
	)
	if err != nil {
		return fmt.Errorf("schedule job %s: %w", job.Name, err)
	}
	return nil
}

// Start begins running the scheduled jobs.
func (sc *Scheduler) Start() { sc.s.Start() }

// Stop cancels the jobs' contexts and waits for running batches to end.
func (sc *Scheduler) Stop() error { return sc.s.Shutdown() }
