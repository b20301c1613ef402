//go:build !linux

package lowprio

import (
	"errors"
	"os"
	"os/exec"
)

// nameChild does nothing: no child runs here.
func nameChild(string) {}

// niceGroup does nothing: no child runs here.
func niceGroup(string) {}

// stdinPipe is stdin; no child runs here.
func stdinPipe() (*os.File, error) { return os.Stdin, nil }

// stdoutPipe is stdout; no child runs here.
func stdoutPipe() (*os.File, error) { return os.Stdout, nil }

// startNiced is implemented on Linux only, where a thread's nice value is
// inherited by what it forks; elsewhere calls run in the process.
func startNiced(*exec.Cmd) error {
	return errors.New("a low-priority child process needs Linux")
}
