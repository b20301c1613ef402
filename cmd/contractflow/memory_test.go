package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// idleHeapLimit bounds the live Go heap of a started, idle node with every
// module (issue 12, idle RSS): 3.4 MiB today; 8 MiB when page templates
// and the forms module's name expressions were built at start (docs/decisions.md,
// "Memory at idle"). Whatever is built at start for the life of the
// process counts here; what is built on first use does not.
const idleHeapLimit = 5 << 20

// TestIdleHeap starts a node in a fresh process of this test binary (a
// process of its own: other tests would have parsed templates and warmed
// caches) and reads its live heap after a collection once start-up and
// the background work are over.
func TestIdleHeap(t *testing.T) {
	if os.Getenv("CONTRACTFLOW_IDLE_HEAP_CHILD") != "" {
		idleHeapChild(t)
		return
	}
	if testing.Short() {
		t.Skip("starts a node in a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleHeap$", "-test.v")
	cmd.Env = append(os.Environ(), "CONTRACTFLOW_IDLE_HEAP_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	_, after, ok := strings.Cut(string(out), "idle heap: ")
	if !ok {
		t.Fatalf("child printed no heap figure:\n%s", out)
	}
	live, err := strconv.ParseInt(strings.Fields(after)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live heap of an idle node: %.1f MiB (limit %.1f MiB)", mib(live), mib(idleHeapLimit))
	if live > idleHeapLimit {
		t.Errorf("live heap of an idle node is %.1f MiB, over %.1f MiB: something start-up builds is kept for the life of the process (profile it: GODEBUG=memprofilerate=1 and a heap profile after Serve)",
			mib(live), mib(idleHeapLimit))
	}
}

func idleHeapChild(t *testing.T) {
	set := testkit.Isolated(t, "sqlite")
	set["http.address"] = "127.0.0.1:0"
	set["seed.demo"] = false
	k, err := kernel.New(kernel.Options{Set: set, Environ: []string{}, LogOutput: io.Discard, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-k.Listening():
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	// The background work (the default-password check hashes with 19 MiB)
	// ends within a second on a quiet machine, far later under -race on a
	// loaded one: read until the heap is under the limit, or for two minutes.
	best := int64(-1)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if best < 0 || int64(ms.HeapAlloc) < best {
			best = int64(ms.HeapAlloc)
		}
		if best <= idleHeapLimit {
			break
		}
	}
	fmt.Printf("idle heap: %d\n", best)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
