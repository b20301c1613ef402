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

// pollable is the file of fd; no child runs here.
func pollable(fd int, name string) *os.File { return os.NewFile(uintptr(fd), name) }

// startNiced is implemented on Linux only, where a thread's nice value is
// inherited by what it forks; elsewhere calls run in the process.
func startNiced(*exec.Cmd) error {
	return errors.New("a low-priority child process needs Linux")
}
