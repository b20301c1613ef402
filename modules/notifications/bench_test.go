package notifications_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// socketsEnv turns on TestManySockets with the number of sockets to open
// (e.g. 10000). The clients run in a child process, so that the figures
// are the server's alone and each process stays under its file limit.
const socketsEnv = "CONTRACTFLOW_BENCH_SOCKETS"

// TestManySockets opens N sockets on one SQLite node, measures the node's
// Go memory (heap and stacks, after GC) and resident size before and after,
// then pushes one notification to all of them. docs/benchmarks.md records
// the figures.
func TestManySockets(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(socketsEnv))
	if n == 0 {
		t.Skip("set " + socketsEnv + "=10000 to measure")
	}
	e := start(t, "sqlite")
	u := e.user(t)
	before := measure()
	child := exec.Command(os.Args[0], "-test.run=^TestSocketClients$", "-test.v")
	child.Env = append(os.Environ(), "CF_CLIENT_ADDR="+e.addr, "CF_CLIENT_TOKEN="+u.token, fmt.Sprintf("CF_CLIENT_N=%d", n))
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = child.Wait() }()
	lines := bufio.NewScanner(stdout)
	wait := func(prefix string) string {
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("client ended before %q", prefix)
		return ""
	}
	opened := time.Now()
	wait("OPEN")
	t.Logf("%d sockets open in %v", n, time.Since(opened).Round(time.Millisecond))
	after := measure()
	pushed := time.Now()
	e.say(t, draft(u.id))
	wait("GOT")
	t.Logf("one notification reached %d sockets in %v", n, time.Since(pushed).Round(time.Millisecond))
	heap := float64(after.heap-before.heap) / float64(n)
	stack := float64(after.stack-before.stack) / float64(n)
	rss := float64(after.rss-before.rss) / float64(n)
	t.Logf("per socket: heap %.1f KiB, stacks %.1f KiB, Go total %.1f KiB; RSS %.1f KiB", heap/1024, stack/1024, (heap+stack)/1024, rss/1024)
	t.Logf("%d sockets: Go heap+stacks %.1f MiB, RSS growth %.1f MiB (RSS %.1f MiB)", n,
		float64(after.heap+after.stack-before.heap-before.stack)/(1<<20), float64(after.rss-before.rss)/(1<<20), float64(after.rss)/(1<<20))
}

type memFigures struct{ heap, stack, rss uint64 }

func measure() memFigures {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	f := memFigures{heap: m.HeapInuse, stack: m.StackInuse}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for l := range strings.SplitSeq(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				f.rss = kb * 1024
			}
		}
	}
	return f
}

// TestSocketClients is the child process of TestManySockets: it opens the
// sockets, says OPEN, says GOT once each has received a push, and ends when
// its stdin closes.
func TestSocketClients(t *testing.T) {
	addr := os.Getenv("CF_CLIENT_ADDR")
	if addr == "" {
		t.Skip("child of TestManySockets")
	}
	n, _ := strconv.Atoi(os.Getenv("CF_CLIENT_N"))
	token := os.Getenv("CF_CLIENT_TOKEN")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	ticket := func() (string, error) {
		req, _ := http.NewRequest("POST", "http://"+addr+"/api/notifications/ws-ticket", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var out struct{ Ticket string }
		err = json.NewDecoder(resp.Body).Decode(&out)
		return out.Ticket, err
	}
	var got atomic.Int64
	all := make(chan struct{})
	conns := make([]*websocket.Conn, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			tk, err := ticket()
			if err != nil {
				t.Errorf("ticket: %v", err)
				return
			}
			u := url.URL{Scheme: "ws", Host: addr, Path: "/api/notifications/ws", RawQuery: "ticket=" + url.QueryEscape(tk)}
			c, _, err := websocket.DefaultDialer.Dial(u.String(), nil)
			if err != nil {
				t.Errorf("dial %d: %v", i, err)
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, c := range conns {
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
				if got.Add(1) == int64(n) {
					close(all)
				}
			}
		}()
	}
	fmt.Println("OPEN")
	<-all
	fmt.Println("GOT")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}
