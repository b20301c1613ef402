// Package lowpriotest lets tests observe the child processes of package
// lowprio from the outside, through /proc: which child serves a worker, the
// nice value of each of its threads, its session and autogroup, and how much
// it has read.
package lowpriotest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/lowprio"
)

// Child returns the pid of this process's child serving the worker name,
// or 0 when none runs. More than one fails the test.
func Child(t testing.TB, name string) int {
	t.Helper()
	var found []int
	for _, pid := range children(t, os.Getpid()) {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue // exited meanwhile
		}
		if slices.Contains(strings.Split(string(env), "\x00"), lowprio.ChildEnv+"="+name) {
			found = append(found, pid)
		}
	}
	if len(found) > 1 {
		t.Fatalf("%d children serve %s: %v", len(found), name, found)
	}
	if len(found) == 0 {
		return 0
	}
	return found[0]
}

// children lists the direct children of pid, over all its threads.
func children(t testing.TB, pid int) []int {
	t.Helper()
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil || len(files) == 0 {
		t.Fatalf("no /proc/%d/task/*/children (%v): the kernel lacks CONFIG_PROC_CHILDREN", pid, err)
	}
	var out []int
	for _, f := range files {
		b, _ := os.ReadFile(f) // a thread may have exited meanwhile
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// Niceness returns the nice value of every thread of pid, by thread id.
func Niceness(t testing.TB, pid int) map[int]int {
	t.Helper()
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		t.Fatalf("no threads of %d: %v", pid, err)
	}
	nice := map[int]int{}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread exited meanwhile
		}
		// The command name may hold spaces: fields count from after its ')';
		// nice is the 19th field of stat, the 17th after the name.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		tid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if nice[tid], err = strconv.Atoi(f[16]); err != nil {
			t.Fatalf("%s: nice %q: %v", path, f[16], err)
		}
	}
	return nice
}

// Session returns the session id of pid.
func Session(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("stat of %d: %v", pid, err)
	}
	// After the name: state, ppid, pgrp, session.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	sid, err := strconv.Atoi(f[3])
	if err != nil {
		t.Fatalf("stat of %d: session %q: %v", pid, f[3], err)
	}
	return sid
}

// Autogroup returns the name and nice value of pid's autogroup (its
// session's scheduling group), from "/autogroup-N nice X"; ok is false on a
// kernel without autogroups, and for a process left in the root group (as
// where autogroups are disabled at boot, on some CI hosts): the kernel
// prints nothing for it.
func Autogroup(t testing.TB, pid int) (group string, nice int, ok bool) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/autogroup", pid))
	if os.IsNotExist(err) {
		return "", 0, false
	}
	if err != nil {
		t.Fatalf("autogroup of %d: %v", pid, err)
	}
	if len(b) == 0 {
		return "", 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 3 || f[1] != "nice" {
		t.Fatalf("autogroup of %d: %q", pid, b)
	}
	if nice, err = strconv.Atoi(f[2]); err != nil {
		t.Fatalf("autogroup of %d: %q", pid, b)
	}
	return f[0], nice, true
}

// BytesRead is what pid has read so far (rchar of /proc/<pid>/io): a child
// reads every request on its stdin.
func BytesRead(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatalf("io of %d: %v", pid, err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatalf("io of %d: rchar %q", pid, v)
			}
			return n
		}
	}
	t.Fatalf("io of %d has no rchar", pid)
	return 0
}
