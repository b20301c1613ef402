package lowprio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/lowprio"
	"github.com/contractflow/contractflow/platform/lowprio/lowpriotest"
)

const name = "lowprio-test"

// shared is the worker as a service holds it; in this test binary's children
// Register serves work instead.
var shared = lowprio.Register(name, work)

// work answers "PID REQUEST", so a test sees which process ran it: "sleep D
// x" first sleeps D, "exit" ends the process, "fail MSG" returns MSG as an
// error.
func work(req []byte) ([]byte, error) {
	verb, arg, _ := strings.Cut(string(req), " ")
	switch verb {
	case "sleep":
		d, err := time.ParseDuration(strings.Fields(arg)[0])
		if err != nil {
			return nil, err
		}
		time.Sleep(d)
	case "exit":
		os.Exit(3)
	case "gc":
		runtime.GC()
		runtime.GC()
	case "fail":
		return nil, errors.New(arg)
	}
	return fmt.Appendf(nil, "%d %s", os.Getpid(), req), nil
}

var quiet = slog.New(slog.DiscardHandler)

// call returns the pid that answered req, failing the test on an error or
// on an answer to another request.
func call(t *testing.T, w *lowprio.Worker, req string) int {
	t.Helper()
	resp, err := w.Call(context.Background(), quiet, []byte(req))
	if err != nil {
		t.Fatalf("call %q: %v", req, err)
	}
	pid, body, _ := strings.Cut(string(resp), " ")
	if body != req {
		t.Fatalf("call %q answered %q", req, resp)
	}
	n, _ := strconv.Atoi(pid)
	return n
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s for %s", what)
		}
	}
}

func exited(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// Concurrent calls share one child, each gets its own answer, and every
// thread of that child runs at nice 19 while this process's threads keep
// their priority (the forking thread is not reused). The child leads a
// session of its own, whose autogroup runs at nice 19 too, so that its
// threads yield to other sessions' (a database server's) as well.
func TestConcurrentCallsShareOneLowPriorityChild(t *testing.T) {
	own := lowpriotest.Niceness(t, os.Getpid())
	var mu sync.Mutex
	pids := map[int]int{}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			pid := call(t, shared, fmt.Sprintf("echo %d", i))
			mu.Lock()
			pids[pid]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(pids) != 1 {
		t.Fatalf("answered by %v, want one child", pids)
	}
	for pid := range pids {
		if pid == os.Getpid() {
			t.Fatal("the calls ran in this process")
		}
		if got := lowpriotest.Child(t, name); got != pid {
			t.Errorf("the child serving %s is %d, the answers came from %d", name, got, pid)
		}
		for tid, nice := range lowpriotest.Niceness(t, pid) {
			if nice != 19 {
				t.Errorf("thread %d of the child runs at nice %d, want 19", tid, nice)
			}
		}
		if sid := lowpriotest.Session(t, pid); sid != pid {
			t.Errorf("the child %d runs in session %d, want its own", pid, sid)
		}
		if group, nice, ok := lowpriotest.Autogroup(t, pid); ok {
			if nice != 19 {
				t.Errorf("the child's autogroup %s runs at nice %d, want 19", group, nice)
			}
			if own, _, _ := lowpriotest.Autogroup(t, os.Getpid()); own == group {
				t.Errorf("the child shares this process's autogroup %s", group)
			}
		}
	}
	// The thread that forked the child ends with the goroutine that niced it.
	want := own[os.Getpid()]
	waitFor(t, "every thread of this process to keep its nice value", func() bool {
		for _, nice := range lowpriotest.Niceness(t, os.Getpid()) {
			if nice != want {
				return false
			}
		}
		return true
	})
}

// A call whose child is killed mid-flight is answered by a new child; a
// request that kills every child it reaches fails after the one retry; the
// next call starts a child again.
func TestCallInFlightSurvivesItsChildBeingKilled(t *testing.T) {
	w := lowprio.NewWorker(name, work, lowprio.SelfExe, time.Minute)
	t.Cleanup(w.Release)
	first := call(t, w, "echo")
	read := lowpriotest.BytesRead(t, first)
	answered := make(chan int, 1)
	go func() { answered <- call(t, w, "sleep 200ms x") }()
	waitFor(t, "the child to read the request", func() bool { return lowpriotest.BytesRead(t, first) > read })
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if second := <-answered; second == first || second == os.Getpid() {
		t.Fatalf("answered by %d; the killed child was %d, this process is %d", second, first, os.Getpid())
	}

	if _, err := w.Call(context.Background(), quiet, []byte("exit")); err == nil || !strings.Contains(err.Error(), "died") {
		t.Fatalf("a request that ends every child: %v, want an error saying the child died", err)
	}
	if pid := call(t, w, "echo"); pid == os.Getpid() {
		t.Fatal("after a crash the call ran in this process")
	}
}

// A child keeps its pipes through garbage collections: it answers on a
// descriptor of its own, which no cleanup of an unreachable os.Stdout can
// close (this test binary keeps no other reference to os.Stdout; the child
// died at its first collection before).
func TestChildSurvivesCollections(t *testing.T) {
	w := lowprio.NewWorker(name, work, lowprio.SelfExe, time.Minute)
	t.Cleanup(w.Release)
	first := call(t, w, "gc")
	for range 3 {
		if pid := call(t, w, "gc"); pid != first {
			t.Fatalf("after a collection answered by %d, want the child %d", pid, first)
		}
	}
}

// A child without calls for the idle time exits (its stdin is closed, as
// when the parent dies); the next call starts another.
func TestIdleChildExits(t *testing.T) {
	w := lowprio.NewWorker(name, work, lowprio.SelfExe, 50*time.Millisecond)
	first := call(t, w, "echo")
	waitFor(t, "the idle child to exit", func() bool { return exited(first) })
	if second := call(t, w, "echo"); second == first || second == os.Getpid() {
		t.Fatalf("after the idle exit answered by %d (first child %d, this process %d)", second, first, os.Getpid())
	}
}

// Release ends an idle child at once, but not one with a call in flight,
// which still gets its answer from that child.
func TestReleaseEndsIdleChild(t *testing.T) {
	w := lowprio.NewWorker(name, work, lowprio.SelfExe, time.Hour)
	first := call(t, w, "echo")
	done := make(chan int, 1)
	go func() {
		defer close(done) // a failed call ends this goroutine without a pid
		done <- call(t, w, "sleep 200ms x")
	}()
	waitFor(t, "the call to be in flight", func() bool { return w.Pending() == 1 })
	w.Release()
	if pid := <-done; pid != first {
		t.Fatalf("the call in flight during Release was answered by %d, want the child %d", pid, first)
	}
	if exited(first) {
		t.Fatal("Release ended a child with a call in flight")
	}
	w.Release()
	waitFor(t, "the released child to exit", func() bool { return exited(first) })
	if second := call(t, w, "echo"); second == first || second == os.Getpid() {
		t.Fatalf("after Release answered by %d (first child %d, this process %d)", second, first, os.Getpid())
	}
}

// Where no child can start, calls run in this process and a warning is
// logged once.
func TestCallsRunInProcessWhenNoChildStarts(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	w := lowprio.NewWorker(name, work, "/nonexistent/contractflow", time.Minute)
	for range 3 {
		resp, err := w.Call(context.Background(), log, []byte("echo"))
		if err != nil || string(resp) != fmt.Sprintf("%d echo", os.Getpid()) {
			t.Fatalf("call = %q, %v; want this process's answer", resp, err)
		}
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"cannot start a low-priority child process"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

// The work's error reaches the caller; a caller whose context ends stops
// waiting, and the child goes on serving.
func TestErrorsAndCancellation(t *testing.T) {
	if _, err := shared.Call(context.Background(), quiet, []byte("fail no such thing")); err == nil || !strings.HasSuffix(err.Error(), ": no such thing") {
		t.Errorf("failing work: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	began := time.Now()
	if _, err := shared.Call(ctx, quiet, []byte("sleep 2s")); !errors.Is(err, context.DeadlineExceeded) || time.Since(began) > time.Second {
		t.Errorf("cancelled call: %v after %s", err, time.Since(began))
	}
	call(t, shared, "echo after")
}
