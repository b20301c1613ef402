package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/contractflow/contractflow/platform/kernel"

	_ "github.com/contractflow/contractflow/modules/all" // the in-process server of --pprof
)

// startInProcess runs the kernel inside the harness (--pprof), with the
// same configuration the binary gets, so runtime/pprof sees the service's
// code. The load generator shares the process: its share of the profile
// is the net/http client.
func (s *server) startInProcess(addr string, logOut *os.File) error {
	k, err := kernel.New(kernel.Options{ConfigDir: filepath.Join(s.workDir, "config"), Environ: s.env(addr), LogOutput: logOut})
	if err != nil {
		return fmt.Errorf("in-process kernel: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.running = cancel, true
	go func() { s.exited <- k.Serve(ctx); _ = logOut.Close() }()
	return nil
}

func (s *server) stopInProcess() error {
	if !s.running {
		return nil
	}
	s.running = false
	s.cancel()
	select {
	case err := <-s.exited:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("in-process server did not stop within 30 s")
	}
}

// procCPU is the CPU time a process has used: the sum of its threads'
// run time from /proc/<pid>/task/<tid>/schedstat, in nanoseconds (a Go
// process's threads live as long as it does, so none takes its time away
// by exiting). Where the kernel keeps no schedstat, it is the user + system
// time of /proc/<pid>/stat, in clock ticks of 10 ms: too coarse for the
// budget pair's rounds of a few hundred moves.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/schedstat", pid)); err == nil {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		var sum int64
		for _, t := range tasks {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
			if f := strings.Fields(string(b)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				sum += ns
			}
		}
		return time.Duration(sum)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields count from after its ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// selfCPU is this process's CPU time, to the microsecond.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// profiler writes a CPU profile and allocation snapshots around each
// scenario to dir (--pprof).
type profiler struct {
	dir  string
	name string
	cpu  *os.File
}

func slug(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
}

func (p *profiler) begin(name string) {
	if p == nil {
		return
	}
	p.name = slug(name)
	p.snapshot("allocs-before")
	f, err := os.Create(filepath.Join(p.dir, p.name+".cpu.pprof"))
	if err != nil {
		logf("pprof: %v", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		logf("pprof: %v", err)
		_ = f.Close()
		return
	}
	p.cpu = f
}

func (p *profiler) end() {
	if p == nil {
		return
	}
	if p.cpu != nil {
		pprof.StopCPUProfile()
		_ = p.cpu.Close()
		p.cpu = nil
	}
	p.snapshot("allocs")
}

// snapshot writes the cumulative allocation profile; the runtime publishes
// it at the end of a GC cycle, so one runs first.
func (p *profiler) snapshot(kind string) {
	runtime.GC()
	f, err := os.Create(filepath.Join(p.dir, p.name+"."+kind+".pprof"))
	if err != nil {
		logf("pprof: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		logf("pprof: %v", err)
	}
}

// writeHeap writes the live heap after a collection: what the idle server
// holds (--pprof).
func writeHeap(path string) {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		logf("pprof: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		logf("pprof: %v", err)
	}
}
