package kernel_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/testkit"
)

func TestModuleContract(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		tm, mods := newTestModules(true)
		app := testkit.Start(t, driver, testkit.WithModules(mods...))

		if got, want := app.Kernel.Enabled(), []string{"guard", "widgets", "audit"}; !slices.Equal(got, want) {
			t.Errorf("start order %v, want %v (dependencies first, ties by name)", got, want)
		}
		if got := tm.rec.list(); !slices.Equal(got, []string{"provision widgets", "provision audit"}) {
			t.Errorf("provision order %v", got)
		}
		if menus := app.Kernel.App().Menus(); len(menus) != 1 || menus[0].Key != "Widgets" {
			t.Errorf("menus %v, want the widgets menu", menus)
		}

		app.Run(t, []testkit.Scenario{
			{Name: "seed ran", Request: testkit.Request{Method: "GET", Path: "/api/widgets"}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) { expectCount(t, r, 1) }},
			{Name: "create publishes in the transaction and after commit",
				Request: testkit.Request{Method: "POST", Path: "/api/widgets", Body: map[string]any{"name": "first", "kind": "Small"}},
				Status:  201,
				Check: func(t *testing.T, r *testkit.Response) {
					if !strings.HasPrefix(r.Header.Get("Location"), "/api/widgets/") {
						t.Errorf("Location %q", r.Header.Get("Location"))
					}
				}},
			{Name: "after-commit handler ran", Request: testkit.Request{Method: "GET", Path: "/api/audit"}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) { expectCount(t, r, 1) }},
			{Name: "an in-transaction veto rolls the write back",
				Request: testkit.Request{Method: "POST", Path: "/api/widgets", Body: map[string]any{"name": "forbidden", "kind": "Small"}},
				Status:  409, Code: "in_use"},
			{Name: "nothing was written by the vetoed request", Request: testkit.Request{Method: "GET", Path: "/api/widgets"}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) { expectCount(t, r, 2) }},
			{Name: "vetoed event never reached after-commit", Request: testkit.Request{Method: "GET", Path: "/api/audit"}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) { expectCount(t, r, 1) }},
			{Name: "guarded route without credentials", Request: testkit.Request{Method: "GET", Path: "/api/widgets/guarded"},
				Status: 401, Code: "token_invalid"},
			{Name: "guarded route with another policy", Request: testkit.Request{Method: "GET", Path: "/api/widgets/guarded",
				Header: map[string]string{"X-Test-Policy": "Other.Read"}}, Status: 403, Code: "forbidden"},
			{Name: "guarded route with the policy", Request: testkit.Request{Method: "GET", Path: "/api/widgets/guarded",
				Header: map[string]string{"X-Test-Policy": "Widgets.Read"}}, Status: 200},
		})

		// Seeding again changes nothing.
		if err := app.Kernel.Seed(context.Background()); err != nil {
			t.Fatal(err)
		}
		expectCount(t, app.Do(testkit.Request{Method: "GET", Path: "/api/widgets"}), 2)

		// Jobs of enabled modules are handed to the scheduler.
		var names []string
		for _, j := range app.Kernel.Jobs() {
			names = append(names, j.Name)
		}
		if !slices.Contains(names, "widgets.tick") {
			t.Errorf("jobs %v lack widgets.tick", names)
		}
	})
}

func expectCount(t *testing.T, r *testkit.Response, want int) {
	t.Helper()
	var body struct{ Count int }
	r.JSON(t, &body)
	if body.Count != want {
		t.Errorf("count %d, want %d", body.Count, want)
	}
}

func TestDisabledModuleServesNoRoutes(t *testing.T) {
	_, mods := newTestModules(true)
	app := testkit.Start(t, "sqlite", testkit.WithModules(mods...), testkit.WithConfig("modules.audit.enabled", false))
	app.Run(t, []testkit.Scenario{
		{Name: "disabled module's route is 404", Request: testkit.Request{Method: "GET", Path: "/api/audit"}, Status: 404, Code: "not_found"},
		{Name: "enabled module still serves", Request: testkit.Request{Method: "GET", Path: "/api/widgets"}, Status: 200},
	})
	for _, r := range app.Kernel.Routes() {
		if r.Module == "audit" {
			t.Errorf("disabled module mounted %s %s", r.Method, r.Path)
		}
	}
	doc, err := app.Kernel.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), "/api/audit") {
		t.Error("the OpenAPI document lists a disabled module's path")
	}
}

func TestStartupErrors(t *testing.T) {
	cases := []struct {
		name    string
		modules func() []kernel.Factory
		set     map[string]any
		want    []string
	}{
		{
			name:    "required module disabled",
			modules: func() []kernel.Factory { _, m := newTestModules(true); return m },
			set:     map[string]any{"modules.widgets.enabled": false},
			want:    []string{"module audit", "module widgets", "disabled", "modules.widgets.enabled"},
		},
		{
			name: "dependency cycle",
			modules: func() []kernel.Factory {
				return []kernel.Factory{
					func() kernel.Module { return named{name: "alpha", requires: []string{"beta"}} },
					func() kernel.Module { return named{name: "beta", requires: []string{"alpha"}} },
				}
			},
			want: []string{"cycle", "alpha", "beta"},
		},
		{
			name: "requirement not compiled in",
			modules: func() []kernel.Factory {
				return []kernel.Factory{func() kernel.Module { return named{name: "alpha", requires: []string{"ghost"}} }}
			},
			want: []string{"alpha", "ghost", "not compiled in"},
		},
		{
			name:    "unknown module in configuration",
			modules: func() []kernel.Factory { _, m := newTestModules(true); return m },
			set:     map[string]any{"modules.ghost.enabled": false},
			want:    []string{"modules.ghost", "unknown module"},
		},
		{
			name:    "invalid value names its key",
			modules: func() []kernel.Factory { _, m := newTestModules(true); return m },
			set:     map[string]any{"database.driver": "oracle"},
			want:    []string{"database.driver", "oracle"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := testkit.Isolated(t, "sqlite")
			for k, v := range tc.set {
				set[k] = v
			}
			_, err := kernel.New(kernel.Options{Modules: tc.modules(), Set: set, Environ: []string{}})
			if err == nil {
				t.Fatal("kernel started; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// A module that uses another optionally starts after it when both are
// compiled in, and starts alone when the other is disabled or absent.
func TestUsesOrdersWithoutRequiring(t *testing.T) {
	user := func() kernel.Module { return usesModule{} }
	helper := func() kernel.Module { return named{name: "omega"} }
	cases := []struct {
		name    string
		modules []kernel.Factory
		set     map[string]any
		want    []string
	}{
		{name: "after the used module, although it sorts first", modules: []kernel.Factory{user, helper}, want: []string{"omega", "alpha"}},
		{name: "used module disabled", modules: []kernel.Factory{user, helper}, set: map[string]any{"modules.omega.enabled": false}, want: []string{"alpha"}},
		{name: "used module not compiled in", modules: []kernel.Factory{user}, want: []string{"alpha"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := testkit.Isolated(t, "sqlite")
			for k, v := range tc.set {
				set[k] = v
			}
			k, err := kernel.New(kernel.Options{Modules: tc.modules, Set: set, Environ: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close(context.Background())
			if got := k.Enabled(); !slices.Equal(got, tc.want) {
				t.Errorf("enabled %v, want %v", got, tc.want)
			}
		})
	}
}

// usesModule sorts before the module it uses, so only Uses can put it after.
type usesModule struct{}

func (usesModule) Info() kernel.Info { return kernel.Info{Name: "alpha", Uses: []string{"omega"}} }

func TestGuardedRouteWithoutGuardFailsAtStart(t *testing.T) {
	_, mods := newTestModules(false)
	k, err := kernel.New(kernel.Options{Modules: mods, Set: testkit.Isolated(t, "sqlite"), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	err = k.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "/api/widgets/guarded") || !strings.Contains(err.Error(), "guard") {
		t.Fatalf("start error %v, want one naming the unguarded route", err)
	}
}

// Every mounted route is in the OpenAPI document and every documented
// operation is mounted.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	_, mods := newTestModules(true)
	app := testkit.Start(t, "sqlite", testkit.WithModules(mods...))
	doc, err := app.Kernel.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := openapi.Operations(doc)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, op := range ops {
		documented[op.Method+" "+op.Path] = true
	}
	mounted := map[string]bool{"GET /health/live": true, "GET /health/ready": true}
	for _, r := range app.Kernel.Routes() {
		mounted[r.Method+" "+openapi.OpenAPIPath(r.Path)] = true
	}
	for k := range mounted {
		if !documented[k] {
			t.Errorf("route %s is not documented", k)
		}
	}
	for k := range documented {
		if !mounted[k] {
			t.Errorf("documented operation %s is not served", k)
		}
	}
}

func TestMigrationsRecordedOnceAndStatus(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		set := testkit.Isolated(t, driver)
		newKernel := func() *kernel.Kernel {
			_, mods := newTestModules(true)
			k, err := kernel.New(kernel.Options{Modules: mods, Set: set, Environ: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { k.Close(context.Background()) })
			return k
		}
		// Several nodes start on one database at once: each migration is
		// applied by exactly one of them, and none fails.
		const nodes = 4
		kernels := make([]*kernel.Kernel, nodes)
		for i := range kernels {
			kernels[i] = newKernel()
		}
		var wg sync.WaitGroup
		applied := make([]int, nodes)
		errs := make([]error, nodes)
		for i, k := range kernels {
			wg.Add(1)
			go func() {
				defer wg.Done()
				list, err := k.Migrate(context.Background())
				applied[i], errs[i] = len(list), err
			}()
		}
		wg.Wait()
		total := 0
		for i := range kernels {
			if errs[i] != nil {
				t.Errorf("node %d: %v", i, errs[i])
			}
			total += applied[i]
		}
		status, err := kernels[0].MigrationStatus(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if total != len(status) {
			t.Errorf("nodes applied %d migrations in all, want each of %d once", total, len(status))
		}
		for _, s := range status {
			if s.AppliedAt == nil {
				t.Errorf("%s %d still pending", s.Module, s.Version)
			}
		}
		if again, err := kernels[1].Migrate(context.Background()); err != nil || len(again) != 0 {
			t.Errorf("second run applied %d (err %v), want 0", len(again), err)
		}
	})
}

func TestReadyAnswers503WhenTheDatabaseIsGone(t *testing.T) {
	_, mods := newTestModules(true)
	app := testkit.Start(t, "sqlite", testkit.WithModules(mods...))
	app.Run(t, []testkit.Scenario{
		{Name: "live", Request: testkit.Request{Method: "GET", Path: "/health/live"}, Status: 200},
		{Name: "ready", Request: testkit.Request{Method: "GET", Path: "/health/ready"}, Status: 200},
	})
	if err := app.Kernel.App().DB.Close(); err != nil {
		t.Fatal(err)
	}
	app.Run(t, []testkit.Scenario{
		{Name: "live without a database", Request: testkit.Request{Method: "GET", Path: "/health/live"}, Status: 200},
		{Name: "ready without a database", Request: testkit.Request{Method: "GET", Path: "/health/ready"}, Status: 503,
			Check: func(t *testing.T, r *testkit.Response) {
				if !strings.Contains(string(r.Body), "Unhealthy") {
					t.Errorf("body %s", r.Body)
				}
			}},
	})
}

// syncBuffer is a bytes.Buffer the server's goroutines may write to while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Serve stops taking requests on cancel, lets the in-flight one finish,
// stops the jobs and modules, and returns without error.
func TestGracefulShutdown(t *testing.T) {
	tm, mods := newTestModules(true)
	set := testkit.Isolated(t, "sqlite")
	set["http.address"] = "127.0.0.1:0"
	set["log.level"] = "info"
	var logs syncBuffer
	k, err := kernel.New(kernel.Options{Modules: mods, Set: set, Environ: []string{}, LogOutput: &logs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Serve(ctx) }()
	var addr string
	select {
	case addr = <-k.Listening():
	case err := <-done:
		t.Fatalf("serve ended early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}

	// The job runs while serving.
	deadline := time.Now().Add(5 * time.Second)
	for tm.widgets.ticks.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if tm.widgets.ticks.Load() == 0 {
		t.Error("the widgets job never ran")
	}

	type result struct {
		status int
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/api/widgets/slow")
		if err != nil {
			inflight <- result{err: err}
			return
		}
		resp.Body.Close()
		inflight <- result{status: resp.StatusCode}
	}()
	for deadline := time.Now().Add(10 * time.Second); tm.widgets.slow.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow request never reached its handler")
		}
	}
	// A connection that never sends a byte does not hold the shutdown up
	// (its read timeout, 30 s, is longer than the shutdown's 15 s).
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	cancel()

	if r := <-inflight; r.err != nil || r.status != 200 {
		t.Errorf("in-flight request: status %d, err %v; want 200", r.status, r.err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after cancel")
	}
	if _, err := http.Get("http://" + addr + "/health/live"); err == nil {
		t.Error("server still accepts connections after shutdown")
	}
	_ = silent.SetReadDeadline(time.Now().Add(time.Second))
	if n, err := silent.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the silent connection is still open: read %d, %v", n, err)
	}
	ticks := tm.widgets.ticks.Load()
	time.Sleep(100 * time.Millisecond)
	if tm.widgets.ticks.Load() != ticks {
		t.Error("the job kept running after shutdown")
	}
	if got := tm.rec.list(); !slices.Equal(got[len(got)-2:], []string{"stop audit", "stop widgets"}) {
		t.Errorf("stop order %v, want dependents first", got)
	}
	// The log says what happened, in order, with readable durations and
	// the request id on the request line.
	out := logs.String()
	last := -1
	for _, want := range []string{"database created", "migrations applied", "seed created rows", "contractflow started",
		"listen=http://" + addr, "shutting down", "inFlight=1", "upTo=15s", "in-flight requests finished",
		"background jobs stopped", "stopped: background jobs finished"} {
		i := strings.Index(out, want)
		if i < 0 || i < last {
			t.Errorf("log lacks %q after the previous line:\n%s", want, out)
			continue
		}
		last = i
	}
	if !regexp.MustCompile(`(?m)took=[0-9.]+(µs|ms|s)$`).MatchString(out) {
		t.Errorf("durations are not readable:\n%s", out)
	}
	if !regexp.MustCompile(`msg=request .*path=/api/widgets/slow .*requestId=\S+`).MatchString(out) {
		t.Errorf("request log lacks the request id:\n%s", out)
	}
}

// Nodes starting together on one database seed one after the other: the
// widgets seed checks before it inserts, and none of them fails or
// duplicates.
func TestConcurrentStartsSeedOnce(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		set := testkit.Isolated(t, driver)
		const nodes = 4
		kernels := make([]*kernel.Kernel, nodes)
		for i := range kernels {
			_, mods := newTestModules(true)
			k, err := kernel.New(kernel.Options{Modules: mods, Set: set, Environ: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { k.Close(context.Background()) })
			kernels[i] = k
		}
		errs := make(chan error, nodes)
		for _, k := range kernels {
			go func() { errs <- k.Start(context.Background()) }()
		}
		for range nodes {
			if err := <-errs; err != nil {
				t.Errorf("start: %v", err)
			}
		}
		var n int64
		if err := kernels[0].App().DB.Conn(context.Background()).Table("widgets").Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%d seeded widgets, want 1", n)
		}
	})
}
