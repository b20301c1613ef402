package core

import (
	"fmt"
	"testing"
	"time"
)

// What a socket's opening read is skipped by a catch-up; a row older than
// the newest of it that commits later is not, nor one within the window
// before it; what is older than the window is.
func TestCatchUpOwesWhatTheOpeningDidNotRead(t *testing.T) {
	at := time.Date(2026, 3, 10, 2, 0, 0, 0, time.UTC)
	row := func(id string, ago time.Duration) Notification { return Notification{ID: id, CreatedAt: at.Add(-ago)} }
	u := &userSockets{}
	u.opened([]Notification{row("newest", 0), row("older", 30*time.Second)})
	for _, c := range []struct {
		n    Notification
		owed bool
	}{
		{row("newest", 0), false},
		{row("older", 30*time.Second), false},
		{row("late", 10*time.Second), true}, // committed after the opening's read
		{row("late2", 59*time.Second), true},
		{row("ancient", 2*time.Minute), false}, // beyond lateCommitWindow
	} {
		if got := u.isNew(c.n); got != c.owed {
			t.Errorf("isNew(%s) = %v, want %v", c.n.ID, got, c.owed)
		}
	}

	// A full window: nothing older than the oldest row read is owed.
	full := make([]Notification, catchUpLimit)
	for i := range full {
		full[i] = row(fmt.Sprintf("r%04d", i), time.Duration(i)*time.Millisecond)
	}
	u = &userSockets{}
	u.opened(full)
	if u.isNew(row("before-oldest", time.Duration(catchUpLimit)*time.Millisecond)) {
		t.Error("a row older than a full window's oldest is owed")
	}
	if !u.isNew(row("between", time.Duration(catchUpLimit/2)*time.Millisecond+time.Microsecond)) {
		t.Error("a row within a full window that the opening did not read is not owed")
	}
}
