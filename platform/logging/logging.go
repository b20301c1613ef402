// Package logging builds the service's slog logger: readable text on stdout
// while developing; JSON in production, on stdout for the platform's log
// collector and, when a folder is configured, in a file rolled every day and
// kept for a configured number of days.
package logging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/scheduler"
)

// FileName is the name of the current log file inside the log folder. Rolled
// files are named contractflow-<UTC time of the roll>.log; a file rolled at
// midnight holds the day before.
const FileName = "contractflow.log"

// maxFileMB is lumberjack's size limit. Days are rolled by Rotator; the size
// limit only stops a runaway day from filling the disk in one file.
const maxFileMB = 1024

// New returns the service logger for level ("debug", "info", "warn" or
// "error"; empty means info).
//
// In development it writes text to stdout. In production it writes JSON to
// stdout and, when dir is not empty, to dir/contractflow.log, keeping rolled
// files maxAgeDays days. The returned Rotator is non-nil only when a file is
// written: the caller then schedules its Job, which rolls the file daily, and
// closes it on shutdown. A nil stdout means os.Stdout.
func New(level string, production bool, dir string, maxAgeDays int, stdout io.Writer) (*slog.Logger, *Rotator, error) {
	return newLogger(level, production, dir, maxAgeDays, stdout, clock.System{})
}

func newLogger(level string, production bool, dir string, maxAgeDays int, stdout io.Writer, clk clock.Clock) (*slog.Logger, *Rotator, error) {
	lvl, err := parseLevel(level)
	if err != nil {
		return nil, nil, err
	}
	if stdout == nil {
		stdout = os.Stdout
	}
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: readableDurations}
	if !production {
		return slog.New(slog.NewTextHandler(stdout, opts)), nil, nil
	}
	if dir == "" {
		return slog.New(slog.NewJSONHandler(stdout, opts)), nil, nil
	}
	r, err := newRotator(dir, maxAgeDays, clk)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewJSONHandler(teeWriter{stdout, r.file}, opts)), r, nil
}

// readableDurations writes durations as "1.2s" or "15ms" in both handlers:
// JSON would otherwise write nanoseconds, which nobody reads.
func readableDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	d := a.Value.Duration()
	switch {
	case d >= time.Second:
		d = d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		d = d.Round(100 * time.Microsecond)
	default:
		d = d.Round(time.Microsecond)
	}
	return slog.String(a.Key, d.String())
}

func parseLevel(s string) (slog.Level, error) {
	if strings.TrimSpace(s) == "" {
		return slog.LevelInfo, nil
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(strings.TrimSpace(s))); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return lvl, nil
}

// teeWriter writes each record to both writers. Unlike io.MultiWriter it
// still writes the file when stdout fails (a closed pipe), and the other way
// round.
type teeWriter struct {
	stdout, file io.Writer
}

func (t teeWriter) Write(p []byte) (int, error) {
	_, err1 := t.stdout.Write(p)
	_, err2 := t.file.Write(p)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Rotator rolls the production log file when the UTC date changes.
// Lumberjack itself rolls by size only, and a job that fires once every 24
// hours would roll at whatever time the service happened to start; a cheap
// check every minute rolls within a minute of midnight instead.
type Rotator struct {
	file *lumberjack.Logger
	clk  clock.Clock

	mu  sync.Mutex
	day string // UTC date (2006-01-02) of the entries in the current file
}

const dayLayout = time.DateOnly

func newRotator(dir string, maxAgeDays int, clk clock.Clock) (*Rotator, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create log folder: %w", err)
	}
	path := filepath.Join(dir, FileName)
	day := clk.Now().UTC().Format(dayLayout)
	// A file left by an earlier run on an earlier day is rolled at the first
	// check rather than continued into today.
	if info, err := os.Stat(path); err == nil {
		if d := info.ModTime().UTC().Format(dayLayout); d < day {
			day = d
		}
	}
	file := &lumberjack.Logger{
		Filename:  path,
		MaxSize:   maxFileMB,
		MaxAge:    maxAgeDays,
		LocalTime: false,
		Compress:  false,
	}
	// Open the file now so a folder we cannot write fails the start-up, not
	// the first log line.
	if _, err := file.Write(nil); err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	return &Rotator{file: file, clk: clk, day: day}, nil
}

// Job returns the scheduler job that rolls the file once the date changes.
// Schedule it only when New returned a non-nil Rotator.
func (r *Rotator) Job() scheduler.Job {
	return scheduler.Job{
		Name:       "log-rotate",
		Interval:   time.Minute,
		FirstDelay: time.Minute,
		Run:        r.rotateIfNewDay,
	}
}

// rotateIfNewDay rolls the file when the UTC date differs from the date of
// the entries in it. Rolling also deletes rolled files older than maxAgeDays.
func (r *Rotator) rotateIfNewDay(context.Context) error {
	today := r.clk.Now().UTC().Format(dayLayout)
	r.mu.Lock()
	defer r.mu.Unlock()
	if today == r.day {
		return nil
	}
	if err := r.file.Rotate(); err != nil {
		return fmt.Errorf("roll log file: %w", err)
	}
	r.day = today
	return nil
}

// Close closes the log file. A nil Rotator has nothing to close.
func (r *Rotator) Close() error {
	if r == nil {
		return nil
	}
	return r.file.Close()
}
