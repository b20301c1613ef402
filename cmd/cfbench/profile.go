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

// treeCPU is the CPU time of a process and its descendants (the server's
// password-hashing child). With precise, the process's own time is the sum
// of its threads' run time from /proc/<pid>/task/<tid>/schedstat, in
// nanoseconds, which misses the time of a thread that exits: a Go process
// keeps its threads, except the one that starts the hashing child
// (platform/lowprio discards it, and with it its time of serving requests,
// a second or more in a login round). Without precise, or where the kernel
// keeps no schedstat, it is the user + system time of /proc/<pid>/stat,
// exited threads' included, in clock ticks of 10 ms, too coarse for the
// budget pair's rounds of a few hundred moves. A descendant's time is
// always its ticks: a child that has exited but is not reaped yet has no
// threads left to read, but its ticks stay until its parent reaps it and
// adds them to its own reaped children's time, which counts too, so every
// tick counts once.
func treeCPU(pid int, precise bool) time.Duration {
	var total time.Duration
	for i, p := range processTree(pid) {
		own, reaped, ok := statCPU(p)
		if !ok {
			continue
		}
		if ns, ok := schedCPU(p); ok && i == 0 && precise {
			own = ns
		}
		total += own + reaped
	}
	return total
}

// statCPU is a process's own user + system time and that of the children
// it has reaped, from /proc/<pid>/stat.
func statCPU(pid int) (own, reaped time.Duration, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// The command name may hold spaces: fields count from after its ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return 0, 0, false
	}
	var t [4]int64 // utime, stime, cutime, cstime
	for i, field := range f[11:15] {
		t[i], _ = strconv.ParseInt(field, 10, 64)
	}
	tick := 10 * time.Millisecond
	return time.Duration(t[0]+t[1]) * tick, time.Duration(t[2]+t[3]) * tick, true
}

// schedCPU is a process's threads' run time in nanoseconds, when the kernel
// keeps schedstat.
func schedCPU(pid int) (time.Duration, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, false
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			return 0, false
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += ns
		}
	}
	return time.Duration(sum), true
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
