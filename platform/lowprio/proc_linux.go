package lowprio

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// pollable returns the pipe fd (the child's stdin or stdout, which the
// parent hands over blocking) as a file that waits in Go's netpoller. A
// blocking read parks a thread in the kernel still holding its P until the
// runtime's monitor (sysmon) takes the P back, which in a child that looks
// idle takes up to 10 ms: meanwhile a core stood idle with a hash queued
// behind that P (logins alone ran at 85 % of the in-process rate with 11 %
// of the machine idle; polled, at 98 % with 3 %).
func pollable(fd int, name string) *os.File {
	_ = syscall.SetNonblock(fd, true) // if it fails the file still works, blocking
	return os.NewFile(uintptr(fd), name)
}

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
