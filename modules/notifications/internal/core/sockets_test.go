package core

import (
	"fmt"
	"net"
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

type unsafeWrap struct{ net.Conn }

func (w unsafeWrap) UnsafeConn() net.Conn { return w.Conn }

type netWrap struct{ net.Conn }

func (w netWrap) NetConn() net.Conn { return w.Conn }

// The socket's kernel buffer is sized through every wrapper the HTTP
// server and the service's listener put around the TCP connection.
func TestTCPOfUnwraps(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := tcpOf(unsafeWrap{netWrap{c}}); got != c {
		t.Fatalf("tcpOf = %v, want the TCP connection", got)
	}
	if got := tcpOf(netWrap{}); got != nil {
		t.Fatalf("tcpOf of no connection = %v", got)
	}
}
