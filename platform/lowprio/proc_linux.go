package lowprio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pipe takes the protocol's pipe at fd (the child's stdin or stdout, which
// the parent hands over blocking) onto a descriptor of its own that waits in
// Go's netpoller, and points fd at standIn, so that a stray read of
// os.Stdin or print to os.Stdout cannot break the protocol.
//
// Polled: a blocking read parks a thread in the kernel still holding its P
// until the runtime's monitor (sysmon) takes the P back, which in a child
// that looks idle takes up to 10 ms: meanwhile a core stood idle with a hash
// queued behind that P (logins alone ran at 85 % of the in-process rate with
// 11 % of the machine idle; polled, at 98 % with 3 %).
//
// A descriptor of its own: a second *os.File on fd shares it with os.Stdin
// or os.Stdout, and the first one's cleanup closes fd once that file is
// unreachable. The child used to replace os.Stdout with os.Stderr, so in a
// program that kept no other reference to the old one, the child's first
// garbage collection closed the pipe and the child died after a call or two.
func pipe(fd, standIn int, name string) (*os.File, error) {
	own, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := unix.Dup3(standIn, fd, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	_ = unix.SetNonblock(own, true) // if it fails the file still works, blocking
	return os.NewFile(uintptr(own), name), nil
}

// stdinPipe is the pipe of requests; stdin then reads /dev/null.
func stdinPipe() (*os.File, error) {
	null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	defer unix.Close(null)
	return pipe(0, null, "stdin")
}

// stdoutPipe is the pipe of answers; stdout then writes to stderr.
func stdoutPipe() (*os.File, error) { return pipe(1, 2, "stdout") }

// nameChild names the child in top and ps -o comm, which would otherwise
// show "exe", the base name of /proc/self/exe. The kernel keeps 15 bytes.
func nameChild(name string) {
	_ = os.WriteFile("/proc/self/comm", []byte(name), 0)
}

// startNiced starts cmd from a thread whose nice value is niceness. On Linux
// nice is a property of each thread and a fork copies the forking thread's,
// so every thread the child ever has runs at that priority from its first
// instruction, with no window where a thread of it runs at the parent's.
func startNiced(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	go forkNiced(cmd, started)
	return <-started
}

// forkNiced raises the nice value of its thread and starts cmd from it. The
// thread stays locked: an unprivileged process cannot lower a nice value
// again, so the goroutine ends still locked, which makes the runtime discard
// the thread instead of running requests on it. (For the same reason the
// child has no Pdeathsig: it fires when the forking thread, not the process,
// exits. The child ends on its stdin's EOF instead.)
func forkNiced(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	if syscall.Gettid() == syscall.Getpid() {
		// The main thread cannot be discarded, only parked for good with its
		// nice value. While this goroutine holds it, a new goroutine gets
		// another thread: fork from there.
		inner := make(chan error, 1)
		go forkNiced(cmd, inner)
		started <- <-inner
		runtime.UnlockOSThread()
		return
	}
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), niceness); err != nil {
		started <- fmt.Errorf("setpriority: %w", err)
		return
	}
	started <- cmd.Start()
}

// niceGroup moves the child into a session of its own and gives that
// session's autogroup the nice value of the child's threads.
//
// Where autogroups are on (sched_autogroup_enabled, the default of most
// distributions, for processes outside a cpu cgroup) the kernel first shares
// the CPU fairly between sessions, each weighing as a nice-0 thread, and
// only then between the threads of a session by their nice values. A
// nice-19 thread thus yields only to the threads of its own session: beside
// a Postgres server, which runs in a session of its own, hashes took a
// third of the cores from its backends (docs/decisions.md, "Logins beside
// Postgres"). A session of its own at nice 19 weighs 15 against every other
// session's 1024, as the child's threads do within it.
//
// The autogroup is only touched once Setsid has made it the child's alone:
// raising the nice of the group the child was born in would lower the
// parent's whole session. Any process may raise its autogroup's nice, but
// only once per 100 ms on the whole host (EAGAIN otherwise), hence the
// retries. Without autogroups in the kernel the file is missing and there
// is nothing to do; where they are off, the write changes nothing.
func niceGroup(name string) {
	if _, err := syscall.Setsid(); err != nil {
		fmt.Fprintf(os.Stderr, "lowprio %s: setsid: %v; the child yields to its own session only\n", name, err)
		return
	}
	for range 20 {
		err := os.WriteFile("/proc/self/autogroup", []byte(strconv.Itoa(niceness)), 0)
		switch {
		case errors.Is(err, syscall.EAGAIN):
			time.Sleep(100 * time.Millisecond)
			continue
		case err != nil && !errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(os.Stderr, "lowprio %s: autogroup nice %d: %v\n", name, niceness, err)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "lowprio %s: autogroup nice %d: still busy after 2 s\n", name, niceness)
}
