// Package lowprio runs CPU-heavy work in a child process of the same
// executable at the lowest CPU priority (nice 19, in a session of its own
// whose autogroup is at nice 19 too), so the kernel's scheduler runs the
// service's own threads, and those of other processes such as a database
// server on the same host, first and gives the work every cycle they leave
// idle.
//
// Go has no goroutine priorities, and any goroutine may run on any thread,
// so a priority can only be a process's: inside the service, work that holds
// every P keeps request goroutines waiting for the runtime's 10 ms
// preemptions however the threads are niced. In a child the kernel sees two
// kinds of thread and preempts the child's as soon as a request's is
// runnable.
//
// The child is the same executable, started with ChildEnv naming the worker
// it serves. Register checks that variable, so it must run during package
// initialisation (a package-level variable): the child then serves before
// main runs, and a test binary, which links the same package, serves the
// same way. The child reads requests on stdin and answers on stdout, each
// frame tagged with a request id, so concurrent calls share one child.
package lowprio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"time"
)

// ChildEnv names the worker a child process serves. The parent sets it in
// the child's environment, which holds nothing of the parent's: the child
// gets no configuration, so no secret held in the parent's variables
// reaches it.
const ChildEnv = "CONTRACTFLOW_LOWPRIO_CHILD"

const (
	// niceness is the lowest priority: a nice-19 thread weighs 15 against a
	// nice-0 thread's 1024, so request threads barely notice it.
	niceness = 19
	// idleExit ends a child that has had no call for this long, so an idle
	// service carries no second process (a Go runtime and its threads, 6 MiB
	// of its own once trimmed), while a burst of calls pays the child's
	// start (about 40 ms) once.
	idleExit = 10 * time.Second
	// trimAfter is how long a child without calls waits before it returns
	// its free memory to the system.
	trimAfter = time.Second
	// startTimeout bounds the wait for a new child's greeting.
	startTimeout = 10 * time.Second
	// selfExe is the running binary, even after a deployment replaced or
	// removed its file.
	selfExe = "/proc/self/exe"
)

// Func is work done in the child: a request in, a response out. In the
// child main never runs, so it may only use what package initialisation set
// up. It is called concurrently.
type Func func(req []byte) ([]byte, error)

// Worker runs one Func in a child process, started at the first call.
type Worker struct {
	name string
	fn   Func
	exe  string        // the child's executable
	idle time.Duration // how long a child without calls lives

	mu     sync.Mutex
	child  *child // the running child; nil when none runs
	inline bool   // a child could not be started: calls run in this process
	lastID uint64
}

// child is one running child process.
type child struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	sendMu  sync.Mutex              // one request frame at a time on stdin
	pending map[uint64]chan<- reply // calls waiting for an answer; guarded by Worker.mu
	idle    *time.Timer             // retires the child; armed while nothing is pending
}

type reply struct {
	resp []byte
	err  error
}

// errChildDied fails the calls in flight in a child that exited.
var errChildDied = errors.New("child process died")

var (
	namesMu sync.Mutex
	names   = map[string]bool{}
)

// Register returns the worker running fn under name, unique in the program.
// In a child started for name it serves fn instead and never returns; so
// call it from a package-level variable declaration, never after main began.
func Register(name string, fn Func) *Worker {
	namesMu.Lock()
	taken := name == "" || names[name]
	names[name] = true
	namesMu.Unlock()
	if taken {
		panic(fmt.Sprintf("lowprio: worker name %q empty or registered twice", name))
	}
	if os.Getenv(ChildEnv) == name {
		serve(name, fn)
	}
	return newWorker(name, fn)
}

func newWorker(name string, fn Func) *Worker {
	return &Worker{name: name, fn: fn, exe: selfExe, idle: idleExit}
}

// Call runs fn(req) in the child and returns its answer. A call whose child
// died in flight is retried once in a new child. Where no child can be
// started (fork or exec forbidden, an unsupported system), this call and
// every later one run fn in this process, and log a warning once on log.
// When ctx ends first Call returns its error; the child still finishes the
// work and its answer is dropped.
func (w *Worker) Call(ctx context.Context, log *slog.Logger, req []byte) ([]byte, error) {
	resp, err := w.callOnce(ctx, log, req)
	if errors.Is(err, errChildDied) {
		resp, err = w.callOnce(ctx, log, req)
	}
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%s: %w", w.name, err)
	}
	return resp, err
}

func (w *Worker) callOnce(ctx context.Context, log *slog.Logger, req []byte) ([]byte, error) {
	c, id, answer := w.enqueue(log)
	if c == nil {
		return run(w.fn, req)
	}
	if err := c.send(id, req); err != nil {
		// The pipe broke: the child is dying. Make sure it is, so its
		// reader ends and fails this call as died.
		_ = c.cmd.Process.Kill()
	}
	select {
	case r := <-answer:
		return r.resp, r.err
	case <-ctx.Done():
		w.forget(c, id)
		return nil, ctx.Err()
	}
}

// enqueue registers a call with the running child, starting one when none
// runs; it returns a nil child when calls run in this process.
func (w *Worker) enqueue(log *slog.Logger) (*child, uint64, <-chan reply) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inline {
		return nil, 0, nil
	}
	if w.child == nil {
		c, err := w.start()
		if err != nil {
			w.inline = true
			log.Warn("cannot start a low-priority child process; its work runs in this process and competes with requests",
				"worker", w.name, "err", err)
			return nil, 0, nil
		}
		w.child = c
	}
	c := w.child
	c.idle.Stop()
	w.lastID++
	answer := make(chan reply, 1)
	c.pending[w.lastID] = answer
	return c, w.lastID, answer
}

// forget drops a call whose caller gave up.
func (w *Worker) forget(c *child, id uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(c.pending, id)
	w.armIdle(c)
}

// armIdle starts the idle countdown of the running child c once no call is
// pending. Callers hold w.mu.
func (w *Worker) armIdle(c *child) {
	if w.child == c && len(c.pending) == 0 {
		c.idle.Reset(w.idle)
	}
}

// Release ends the running child now unless a call is pending, instead of
// after the idle time: for a caller that knows no call follows soon, such as
// a one-off check at start-up, so that an idle service does not carry the
// child (its Go runtime and the memory of its last call) for those seconds.
// A later call starts a new child.
func (w *Worker) Release() {
	w.mu.Lock()
	c := w.child
	w.mu.Unlock()
	if c != nil {
		w.retire(c)
	}
}

// retire ends c when it is still idle: closing its stdin makes it exit.
func (w *Worker) retire(c *child) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.child != c || len(c.pending) > 0 {
		return
	}
	w.child = nil
	_ = c.stdin.Close()
}

// start launches a child at the lowest priority and waits for its greeting,
// which proves that it runs this program's worker. Callers hold w.mu.
func (w *Worker) start() (*child, error) {
	cmd := exec.Command(w.exe)
	cmd.Args = []string{os.Args[0], "lowprio", w.name} // names the child in ps; ChildEnv chooses it
	// A -race build sleeps a second at exit by default, holding its stderr
	// (the test runner's) open; other builds ignore GORACE.
	cmd.Env = []string{ChildEnv + "=" + w.name, "GORACE=atexit_sleep_ms=0"}
	cmd.Dir = "/"
	cmd.Stderr = os.Stderr // a crash's trace goes where the service's own would
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = stdin.Close()
		return nil, err
	}
	if err := startNiced(cmd); err != nil {
		_, _ = stdin.Close(), stdout.Close()
		return nil, err
	}
	out := bufio.NewReader(stdout)
	timer := time.AfterFunc(startTimeout, func() { _ = cmd.Process.Kill() })
	_, kind, greeting, err := readFrame(out)
	timer.Stop()
	if err != nil || kind != kindHello || string(greeting) != w.name {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err == nil {
			err = fmt.Errorf("unexpected greeting %q", greeting)
		}
		return nil, fmt.Errorf("%s gave no greeting: %w", w.exe, err)
	}
	c := &child{cmd: cmd, stdin: stdin, pending: map[uint64]chan<- reply{}}
	c.idle = time.AfterFunc(w.idle, func() { w.retire(c) })
	go w.read(c, out)
	return c, nil
}

// read hands the child's answers to their calls until its stdout ends, then
// fails the calls still pending and reaps the child.
func (w *Worker) read(c *child, out *bufio.Reader) {
	for {
		id, kind, payload, err := readFrame(out)
		if err != nil {
			break
		}
		r := reply{resp: payload}
		if kind == kindError {
			r = reply{err: errors.New(string(payload))}
		}
		w.mu.Lock()
		answer, ok := c.pending[id]
		delete(c.pending, id)
		w.armIdle(c)
		w.mu.Unlock()
		if ok {
			answer <- r
		}
	}
	w.mu.Lock()
	if w.child == c {
		w.child = nil // the next call starts a new child
	}
	c.idle.Stop()
	for id, answer := range c.pending {
		answer <- reply{err: errChildDied}
		delete(c.pending, id)
	}
	w.mu.Unlock()
	_ = c.stdin.Close()
	_ = c.cmd.Process.Kill() // after a protocol error it may still run
	_ = c.cmd.Wait()
}

func (c *child) send(id uint64, req []byte) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return writeFrame(c.stdin, id, kindRequest, req)
}

// run calls fn, turning a panic into an error so that one bad request
// cannot end the child's other work.
func run(fn Func, req []byte) (resp []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(req)
}

// serve is the child's life: greet, then answer each request on a goroutine
// of its own until stdin ends (the parent retired it or exited).
func serve(name string, fn Func) {
	nameChild(name)
	niceGroup(name)
	in, err := stdinPipe()
	if err != nil {
		fail(name, err)
	}
	out, err := stdoutPipe()
	if err != nil {
		fail(name, err)
	}
	var mu sync.Mutex // one answer at a time on stdout; guards running
	running := 0
	// An idle child allocates nothing, so no collection frees the last
	// calls' garbage (argon2's 19 MiB per hash): it is returned to the
	// system once no call has run for trimAfter, not after each call, which
	// would make a burst's calls fault their memory in again every time.
	trim := time.AfterFunc(time.Hour, func() {
		mu.Lock()
		idle := running == 0
		mu.Unlock()
		if idle {
			debug.FreeOSMemory()
		}
	})
	trim.Stop()
	answer := func(id uint64, kind byte, payload []byte) {
		mu.Lock()
		defer mu.Unlock()
		if writeFrame(out, id, kind, payload) != nil {
			os.Exit(0) // the parent is gone
		}
		if running--; running == 0 {
			trim.Reset(trimAfter)
		}
	}
	if writeFrame(out, 0, kindHello, []byte(name)) != nil {
		os.Exit(0)
	}
	r := bufio.NewReader(in)
	for {
		id, _, req, err := readFrame(r)
		if errors.Is(err, io.EOF) {
			os.Exit(0)
		}
		if err != nil {
			fail(name, err)
		}
		mu.Lock()
		running++
		mu.Unlock()
		go func() {
			resp, err := run(fn, req)
			if err != nil {
				answer(id, kindError, []byte(err.Error()))
				return
			}
			answer(id, kindOK, resp)
		}()
	}
}

// fail ends a child that cannot go on.
func fail(name string, err error) {
	fmt.Fprintf(os.Stderr, "lowprio %s: %v\n", name, err)
	os.Exit(1)
}
