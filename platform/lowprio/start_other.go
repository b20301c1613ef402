//go:build !linux

package lowprio

import (
	"errors"
	"os/exec"
)

// startNiced is implemented on Linux only, where a thread's nice value is
// inherited by what it forks; elsewhere calls run in the process.
func startNiced(*exec.Cmd) error {
	return errors.New("a low-priority child process needs Linux")
}
