package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildServer compiles cmd/contractflow the way `make build` and the
// Dockerfile do (-trimpath, stripped), so the size is the shipped one.
// tags, when not empty, are passed as -tags (e.g. sqlite_fts5).
func buildServer(ctx context.Context, repo, out, tags string) error {
	args := []string{"build", "-trimpath", "-ldflags", "-s -w"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "-o", out, "./cmd/contractflow")...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/contractflow: %w\n%s", err, b)
	}
	return nil
}

// server is one run of the built binary on 127.0.0.1.
type server struct {
	bin     string
	workDir string   // holds the empty config folder, files and logs
	dbEnv   []string // CONTRACTFLOW_DATABASE_* settings
	extra   []string // --set overrides, applied last
	base    string   // http://127.0.0.1:port once started
	cmd     *exec.Cmd
	exited  chan error
	logPath string

	inProcess bool   // --pprof: run the kernel inside this process
	cancel    func() // stops the in-process kernel
	running   bool   // the in-process kernel serves
}

// env is the process environment: the parent's minus any CONTRACTFLOW_*
// (so a developer's settings do not leak in), plus the run's settings.
func (s *server) env(addr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CONTRACTFLOW_") {
			env = append(env, kv)
		}
	}
	return append(append(append(env, s.dbEnv...),
		"CONTRACTFLOW_CONFIG_DIR="+filepath.Join(s.workDir, "config"), // empty: no file applies
		"CONTRACTFLOW_APP_ENV=development",
		"CONTRACTFLOW_HTTP_ADDRESS="+addr,
		"CONTRACTFLOW_STORAGE_PATH="+filepath.Join(s.workDir, "files"),
		"CONTRACTFLOW_LOG_DIR="+filepath.Join(s.workDir, "logs"),
		"CONTRACTFLOW_LOG_LEVEL=error",
		"CONTRACTFLOW_RATELIMIT_GLOBALPERMINUTE=100000000",
		"CONTRACTFLOW_RATELIMIT_LOGINPERMINUTE=100000000",
		"CONTRACTFLOW_SEED_DEMO=false",
		"CONTRACTFLOW_IDENTITY_CACHESYNCINTERVAL=1s",
		// The SLA job would start moving the data set's overdue contracts
		// 30 s after the start, in the middle of the scenarios; hold it off.
		"CONTRACTFLOW_SLA_FIRSTRUNDELAY=1h",
	), s.extra...)
}

// start launches the server on a free port and waits until /health/ready
// answers 200; it returns the time from exec to ready.
func (s *server) start(ctx context.Context) (time.Duration, error) {
	if err := os.MkdirAll(filepath.Join(s.workDir, "config"), 0o750); err != nil {
		return 0, err
	}
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	s.base = "http://" + addr
	s.logPath = filepath.Join(s.workDir, "server.log")
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	s.exited = make(chan error, 1)
	if s.inProcess {
		if err := s.startInProcess(addr, logf); err != nil {
			_ = logf.Close()
			return 0, err
		}
	} else {
		s.cmd = exec.Command(s.bin, "serve")
		s.cmd.Dir = s.workDir
		s.cmd.Env = s.env(addr)
		s.cmd.Stdout, s.cmd.Stderr = logf, logf
		if err := s.cmd.Start(); err != nil {
			_ = logf.Close()
			return 0, fmt.Errorf("start server: %w", err)
		}
		go func() { s.exited <- s.cmd.Wait(); _ = logf.Close() }()
	}

	hc := &http.Client{Timeout: time.Second}
	const maxPolls, pollEvery = 12_000, 5 * time.Millisecond // at most a minute
	for range maxPolls {
		select {
		case err := <-s.exited:
			s.cmd, s.running = nil, false
			return 0, fmt.Errorf("server exited before it was ready (%v); log %s:\n%s", err, s.logPath, tail(s.logPath, 20))
		case <-ctx.Done():
			_ = s.stop()
			return 0, ctx.Err()
		default:
		}
		resp, err := hc.Get(s.base + "/health/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(began), nil
			}
		}
		time.Sleep(pollEvery)
	}
	_ = s.stop()
	return 0, fmt.Errorf("server not ready after a minute; log %s", s.logPath)
}

// stop sends SIGTERM and waits for the graceful shutdown (at most 30 s, then
// SIGKILL).
func (s *server) stop() error {
	if s.inProcess {
		return s.stopInProcess()
	}
	if s.cmd == nil {
		return nil
	}
	defer func() { s.cmd = nil }()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("server exited with %v; log %s", err, s.logPath)
		}
		return err
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("server ignored SIGTERM for 30 s and was killed")
	}
}

func (s *server) pid() int {
	if s.inProcess {
		if !s.running {
			return 0
		}
		return os.Getpid()
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// memory reads VmRSS (now) and VmHWM (peak since start or since the last
// resetPeak) of the server and its descendants, in bytes.
func (s *server) memory() (rss, hwm int64) {
	m := treeMemory(s.pid())
	return m.rss, m.hwm
}

// resetPeak clears VmHWM of the server and its descendants so the next
// reading is the peak of what follows (Linux ≥ 4.0: writing 5 to
// clear_refs). It reports whether that worked for the server; a descendant
// may end meanwhile.
func (s *server) resetPeak() bool {
	ok := false
	for i, pid := range processTree(s.pid()) {
		err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
		if i == 0 {
			ok = err == nil
		}
	}
	return ok
}

// processTree is pid and its descendants (the server's password-hashing
// child, platform/lowprio), through /proc/<pid>/task/<tid>/children. A
// process that ends meanwhile is left out.
func processTree(pid int) []int {
	if pid == 0 {
		return nil
	}
	pids := []int{pid}
	for i := 0; i < len(pids); i++ {
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pids[i]))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, field := range strings.Fields(string(b)) {
				if child, err := strconv.Atoi(field); err == nil {
					pids = append(pids, child)
				}
			}
		}
	}
	return pids
}

// memInfo is a process's memory from /proc/<pid>/status, in bytes: the
// resident set now and at its peak, and the resident set split into
// anonymous memory (heap, stacks, SQLite caches) and file pages (mostly the
// binary's own text and data, shared and reclaimable).
type memInfo struct{ rss, hwm, anon, file int64 }

// treeMemory sums memInfo over pid and its descendants. A descendant's file
// pages are left out of its resident sets: they are the binary's, which the
// server maps too (the hashing child runs the same executable), and counted
// again they added some 32 MiB to every scenario that ran while the child
// lived. The peaks of processes that peaked at different times add up, so
// the sum is an upper bound.
func treeMemory(pid int) memInfo {
	var sum memInfo
	for i, p := range processTree(pid) {
		m := procMemory(p)
		if i > 0 {
			m.rss, m.hwm = m.rss-m.file, max(m.hwm-m.file, 0)
		}
		sum.rss, sum.hwm, sum.anon, sum.file = sum.rss+m.rss, sum.hwm+m.hwm, sum.anon+m.anon, sum.file+m.file
	}
	return sum
}

// treeProportional sums the proportional set size (PSS: each shared page
// split between the processes that map it) over pid and its descendants,
// in rss, anon and file: the binary's pages, which the hashing child maps
// too, count once, as the idle figure should.
func treeProportional(pid int) memInfo {
	var sum memInfo
	for _, p := range processTree(pid) {
		m := readKB(fmt.Sprintf("/proc/%d/smaps_rollup", p), map[string]int{"Pss": 0, "Pss_Anon": 2, "Pss_File": 3})
		sum.rss, sum.anon, sum.file = sum.rss+m.rss, sum.anon+m.anon, sum.file+m.file
	}
	return sum
}

func procMemory(pid int) memInfo {
	return readKB(fmt.Sprintf("/proc/%d/status", pid), map[string]int{"VmRSS": 0, "VmHWM": 1, "RssAnon": 2, "RssFile": 3})
}

// readKB reads the "Key: N kB" lines of path named in fields into the
// memInfo field of the given index (rss, hwm, anon, file), in bytes.
func readKB(path string, fields map[string]int) memInfo {
	var m memInfo
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	dst := [...]*int64{&m.rss, &m.hwm, &m.anon, &m.file}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if i, known := fields[key]; ok && known {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
			*dst[i] = kb * 1024
		}
	}
	return m
}

// rssSampler polls the VmRSS of the server and its descendants every 20 ms:
// the fallback peak where clear_refs is not allowed, and a cross-check where
// it is.
type rssSampler struct {
	stop chan struct{}
	done chan int64
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan int64, 1)}
	go func() {
		var peak int64
		var pids []int
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for tick := 0; ; tick++ {
			// Finding the tree reads every thread's children file: done
			// every tick, it took a sixth of a core from the run it
			// measures. A child started in between counts from the next
			// look (VmHWM, the main figure, has it anyway).
			if tick%25 == 0 {
				pids = processTree(pid)
			}
			var rss int64
			for i, p := range pids {
				m := procMemory(p)
				if i > 0 {
					m.rss -= m.file // the binary's pages, counted in the server's (treeMemory)
				}
				rss += m.rss
			}
			peak = max(peak, rss)
			select {
			case <-s.stop:
				s.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) peak() int64 { close(s.stop); return <-s.done }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
