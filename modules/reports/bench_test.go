package reports_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/modules/reports/internal/core"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// Benchmarks run on an instance holding benchContracts contracts, seeded
// once per driver per test process (seeding takes seconds; the benchmark
// functions are called several times). Plain `go test` never seeds.
//
//	go test -run '^$' -bench . -benchmem ./modules/reports/
const (
	benchContracts = 100_000
	benchSuppliers = 2_000
	benchProjects  = 300
	benchDrafters  = 10
	benchMonths    = 24
)

// benchNow is the instances' fixed clock: tokens never expire mid-run and
// every figure is the same from run to run.
var benchNow = time.Date(2026, 11, 15, 3, 0, 0, 0, time.UTC)

// TestMain releases the benchmark instances (and their Postgres schemas)
// once every benchmark has run.
func TestMain(m *testing.M) {
	code := m.Run()
	fixtures.mu.Lock()
	for _, tb := range fixtures.owners {
		tb.cleanup()
	}
	fixtures.mu.Unlock()
	os.Exit(code)
}

// fixture is a seeded instance and a reports service on it.
type fixture struct {
	owner  *processTB
	once   sync.Once
	client *http.Client
	app    *testkit.App
	svc    *core.Service
	token  string
	live   int64 // contracts not soft-deleted
	err    error
}

var fixtures = struct {
	mu     sync.Mutex
	byName map[string]*fixture
	owners []*processTB
}{byName: map[string]*fixture{}}

// benchFixture returns the seeded instance of driver, building it on first use.
func benchFixture(b *testing.B, driver string) *fixture {
	b.Helper()
	fixtures.mu.Lock()
	defer fixtures.mu.Unlock()
	fx, ok := fixtures.byName[driver]
	if !ok {
		tb := &processTB{name: "bench-" + driver}
		fixtures.owners = append(fixtures.owners, tb)
		began := time.Now()
		fx = buildFixture(tb, driver)
		fixtures.byName[driver] = fx
		if fx.err == nil {
			b.Logf("%s: seeded %d contracts (%d live) in %v", driver, benchContracts, fx.live, time.Since(began).Round(time.Millisecond))
		}
	}
	if fx.err != nil {
		b.Fatalf("seed %s: %v", driver, fx.err)
	}
	return fx
}

func buildFixture(tb *processTB, driver string) (fx *fixture) {
	fx = &fixture{owner: tb}
	defer func() {
		if r := recover(); r != nil {
			fx.err = fmt.Errorf("%v", r)
		}
	}()
	fx.app = identitytest.Start(tb, driver, testkit.WithClock(clock.NewManual(benchNow)))
	fx.token = identitytest.AdminToken(tb, fx.app)
	drafters := make([]string, benchDrafters)
	for i := range drafters {
		drafters[i], _, _ = identitytest.NewUser(tb, fx.app, "Drafter")
	}
	live, err := seed(context.Background(), fx.app.Kernel.App(), drafters, benchVolume)
	if err != nil {
		panic(err)
	}
	fx.live = live
	a := fx.app.Kernel.App()
	q, err := kernel.Need[contracts.Query](a)
	if err != nil {
		panic(err)
	}
	md, err := kernel.Need[masterdata.Lookup](a)
	if err != nil {
		panic(err)
	}
	dir, err := kernel.Need[identity.Directory](a)
	if err != nil {
		panic(err)
	}
	fx.svc = &core.Service{Contracts: q, MasterData: md, Directory: dir, Clock: a.Clock, Location: a.Config.Business.Location}
	return fx
}

// listen serves the instance on an in-memory listener, once, and returns a
// client for it. Unlike App.Do (fiber's Test), which buffers a whole
// response, this streams the body the way a real connection does.
func (fx *fixture) listen() *http.Client {
	fx.once.Do(func() {
		ln := fasthttputil.NewInmemoryListener()
		go func() { _ = fx.app.Kernel.HTTP().Listener(ln) }()
		fx.owner.Cleanup(func() { _ = ln.Close() })
		fx.client = &http.Client{Transport: &http.Transport{
			DialContext: func(context.Context, string, string) (net.Conn, error) { return ln.Dial() },
		}}
	})
	return fx.client
}

// volume is how much seed inserts. With instants > 0 every contract is
// created at one of that many instants, so many share a created_at.
type volume struct {
	contracts, suppliers, projects, instants int
}

var benchVolume = volume{contracts: benchContracts, suppliers: benchSuppliers, projects: benchProjects}

// seed inserts suppliers, projects, contracts and the approval rows of the
// published ones straight into the tables, in batches inside one
// transaction: through the API it would take minutes. Contracts are spread
// over the 24 months before benchNow and all nine phases; deadlines of
// active ones lie within ten days either side of it; one in a hundred is
// soft-deleted. It returns how many are live.
func seed(ctx context.Context, a *kernel.App, drafters []string, v volume) (live int64, err error) {
	rng := rand.New(rand.NewPCG(7, 2026))
	id := func() string { return uuid.Must(uuid.NewV7()).String() }
	now := benchNow
	suppliers := make([]string, v.suppliers)
	projects := make([]string, v.projects)
	workflow := id()
	err = a.DB.InTx(ctx, func(ctx context.Context) error {
		conn := a.DB.Conn(ctx)
		insert := func(table, columns string, rows [][]any) error {
			const maxParams = 30_000 // under SQLite's 32 766 and Postgres' 65 535
			per := maxParams / len(rows[0])
			one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(rows[0])), ",") + ")"
			for start := 0; start < len(rows); start += per {
				end := min(start+per, len(rows))
				args := make([]any, 0, (end-start)*len(rows[0]))
				for _, r := range rows[start:end] {
					args = append(args, r...)
				}
				stmt := "INSERT INTO " + table + " (" + columns + ") VALUES " + strings.TrimSuffix(strings.Repeat(one+",", end-start), ",")
				if err := conn.Exec(stmt, args...).Error; err != nil {
					return fmt.Errorf("insert into %s: %w", table, err)
				}
			}
			return nil
		}
		var rows [][]any
		for i := range suppliers {
			suppliers[i] = id()
			name := fmt.Sprintf("Công ty TNHH Nhà cung cấp %04d", i)
			rows = append(rows, []any{suppliers[i], fmt.Sprintf("NCC%04d", i), name, true, 1, now, now, strings.ToLower(name), "Material"})
		}
		if err := insert("suppliers", "id, code, name, is_active, version, created_at, updated_at, search_text, supplier_type", rows); err != nil {
			return err
		}
		rows = rows[:0]
		for i := range projects {
			projects[i] = id()
			name := fmt.Sprintf("Dự án %03d", i)
			rows = append(rows, []any{projects[i], fmt.Sprintf("DA%03d", i), name, true, 1, now, now, strings.ToLower(name), "Active"})
		}
		if err := insert("projects", "id, code, name, is_active, version, created_at, updated_at, search_text, status", rows); err != nil {
			return err
		}

		phases := contracts.Phases
		weights := []int{15, 10, 10, 5, 5, 5, 5, 40, 5} // DaPhatHanh dominates, as in a live system
		pick := func() string {
			n := rng.IntN(100)
			for i, w := range weights {
				if n < w {
					return phases[i]
				}
				n -= w
			}
			return phases[0]
		}
		span := now.Sub(now.AddDate(0, -benchMonths, 0))
		var contractRows, approvalRows [][]any
		for i := range v.contracts {
			cid := id()
			created := now.Add(-time.Duration(rng.Int64N(int64(span)))).Truncate(time.Microsecond)
			if v.instants > 0 {
				created = now.Add(-time.Duration(1+rng.IntN(v.instants)) * time.Hour)
			}
			phase := pick()
			var deadline, code, project, deleted any
			contractType := "Subcontract"
			if rng.IntN(10) == 0 {
				contractType = "FrameworkSupply"
			} else {
				project = projects[rng.IntN(len(projects))]
			}
			switch phase {
			case contracts.DaPhatHanh, contracts.TuChoi:
			default:
				deadline = now.Add(time.Duration(rng.Int64N(int64(20*24*time.Hour))) - 10*24*time.Hour).Truncate(time.Microsecond)
			}
			if phase == contracts.DangDongDau || phase == contracts.DaPhatHanh {
				code = fmt.Sprintf("B-%s-%06d", contractType[:3], i)
			}
			if rng.IntN(100) == 0 {
				deleted = now
			} else {
				live++
			}
			drafter := drafters[i%len(drafters)]
			contractRows = append(contractRows, []any{cid, fmt.Sprintf("Hợp đồng thi công hạng mục %d", i), contractType,
				suppliers[rng.IntN(len(suppliers))], project, 1_000_000 + rng.Int64N(10_000_000_000), "VND", phase, deadline, code,
				"{}", drafter, workflow, "", 1, created, drafter, created, deleted})
			if phase == contracts.DaPhatHanh {
				at := created.Add(time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
				if at.After(now) {
					at = now
				}
				approvalRows = append(approvalRows, []any{id(), cid, contracts.DangDongDau, contracts.DaPhatHanh, drafter, "Approve", "", at})
			}
		}
		if err := insert("contracts", "id, title, contract_type, supplier_id, project_id, value, currency, phase, sla_deadline, ma_hop_dong, "+
			"draft_data, drafter_id, workflow_definition_id, description, version, created_at, created_by, updated_at, deleted_at", contractRows); err != nil {
			return err
		}
		return insert("contract_approvals", "id, contract_id, from_phase, to_phase, approver_user_id, decision, comment, approved_at", approvalRows)
	})
	if err != nil {
		return 0, err
	}
	// Bring the database to the state a running one is in, not the one a
	// single 100 000-row transaction leaves. Postgres' autovacuum would
	// vacuum and analyse the new rows within a minute (without the
	// visibility map no scan is index-only); SQLite checkpoints its WAL as
	// it goes, while one huge transaction leaves ~150 MB of it for every read
	// to look pages up in (a third slower). The SQLite indexes stay as
	// fragmented as row-by-row inserts left them: no VACUUM, no ANALYZE.
	settle := "PRAGMA wal_checkpoint(TRUNCATE)"
	if a.DB.Dialect() == "postgres" {
		settle = "VACUUM (ANALYZE) contracts, contract_approvals, suppliers, projects"
	}
	if err := a.DB.Conn(ctx).Exec(settle).Error; err != nil {
		return 0, err
	}
	return live, nil
}

// BenchmarkDashboard measures the dashboard over 100 000 contracts: the
// service call (five aggregate queries and two name look-ups) and the whole
// GET /api/reports/dashboard in-process. Target: under 50 ms on SQLite.
func BenchmarkDashboard(b *testing.B) {
	for _, d := range testkit.Drivers() {
		b.Run(d, func(b *testing.B) {
			fx := benchFixture(b, d)
			b.Run("service", func(b *testing.B) {
				var got core.Dashboard
				cpu0 := cpuTime()
				for b.Loop() {
					var err error
					if got, err = fx.svc.Dashboard(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
				if got.TotalContracts != fx.live || len(got.TopSuppliers) != 5 || len(got.Monthly) != 12 {
					b.Fatalf("dashboard of %d live contracts: total %d, %d top suppliers, %d months",
						fx.live, got.TotalContracts, len(got.TopSuppliers), len(got.Monthly))
				}
				reportMS(b, cpu0)
			})
			b.Run("http", func(b *testing.B) {
				cpu0 := cpuTime()
				for b.Loop() {
					req := httptest.NewRequest("GET", "/api/reports/dashboard", nil)
					req.Header.Set("Authorization", "Bearer "+fx.token)
					resp, err := fx.app.Kernel.HTTP().Test(req, -1)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
				reportMS(b, cpu0)
			})
		})
	}
}

// BenchmarkExport100k measures the export of every contract (about 99 000
// live rows): the service's Export written to io.Discard, and the whole GET
// over an in-memory connection, the body read as it streams. Targets: under 3 s, and the peak heap and peak RSS under
// 100 MiB above idle.
func BenchmarkExport100k(b *testing.B) {
	for _, d := range testkit.Drivers() {
		b.Run(d, func(b *testing.B) {
			fx := benchFixture(b, d)
			b.Run("service", func(b *testing.B) {
				peak := startPeak(b)
				cpu0 := cpuTime()
				for b.Loop() {
					e, err := fx.svc.StartExport(b.Context(), contracts.ExportFilter{})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := e.WriteTo(io.Discard); err != nil {
						b.Fatal(err)
					}
					if int64(e.Rows) != fx.live {
						b.Fatalf("exported %d rows, want %d", e.Rows, fx.live)
					}
					e.Close()
				}
				peak.stop()
				reportMS(b, cpu0)
			})
			b.Run("http", func(b *testing.B) {
				client := fx.listen()
				peak := startPeak(b)
				var size int64
				cpu0 := cpuTime()
				for b.Loop() {
					req, _ := http.NewRequestWithContext(b.Context(), "GET", "http://bench/api/reports/contracts/export", nil)
					req.Header.Set("Authorization", "Bearer "+fx.token)
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					size, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
				peak.stop()
				reportMS(b, cpu0)
				b.ReportMetric(float64(size)/(1<<20), "xlsx-MiB")
			})
		})
	}
}

// reportMS adds wall milliseconds per operation and, as a figure less
// sensitive to other load on the machine, the process's CPU milliseconds
// per operation since cpu0 (SQLite runs in-process; Postgres work is in
// the server and not counted).
func reportMS(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peak samples the live heap every millisecond while a benchmark runs (a
// runtime/metrics read does not stop the world) and resets the kernel's
// peak-RSS counter (VmHWM) at the start, so both peaks are of the export
// alone, measured from an idle, collected baseline.
type peak struct {
	b                 *testing.B
	done              chan struct{}
	wg                sync.WaitGroup
	idleHeap, maxHeap uint64
	idleRSS           uint64
	hwmReset          bool
	before            runtime.MemStats
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func startPeak(b *testing.B) *peak {
	runtime.GC()
	debug.FreeOSMemory()
	p := &peak{b: b, done: make(chan struct{})}
	runtime.ReadMemStats(&p.before)
	p.idleHeap = readHeap()
	p.idleRSS = procStatus("VmRSS")
	p.hwmReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	p.maxHeap = p.idleHeap
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
				p.maxHeap = max(p.maxHeap, readHeap())
			}
		}
	}()
	return p
}

func (p *peak) stop() {
	close(p.done)
	p.wg.Wait()
	p.maxHeap = max(p.maxHeap, readHeap())
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	const mib = 1 << 20
	p.b.ReportMetric(float64(p.maxHeap-p.idleHeap)/mib, "peak-heap-MiB")
	if hwm := procStatus("VmHWM"); p.hwmReset && hwm > 0 {
		p.b.ReportMetric(float64(hwm-min(hwm, p.idleRSS))/mib, "peak-rss-MiB")
	}
	p.b.Logf("idle heap %.1f MiB, peak heap %.1f MiB; HeapInuse %.1f → %.1f MiB, Sys %.1f → %.1f MiB; RSS idle %.1f MiB, VmHWM %.1f MiB (reset: %v)",
		float64(p.idleHeap)/mib, float64(p.maxHeap)/mib, float64(p.before.HeapInuse)/mib, float64(after.HeapInuse)/mib,
		float64(p.before.Sys)/mib, float64(after.Sys)/mib, float64(p.idleRSS)/mib, float64(procStatus("VmHWM"))/mib, p.hwmReset)
}

func readHeap() uint64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// procStatus reads a "kB" line of /proc/self/status in bytes; 0 if absent.
func procStatus(key string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && k == key {
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

// processTB is a testing.TB that lives for the whole test process, so the
// benchmark instances outlive the benchmark that first asked for them.
// Failures panic; buildFixture turns the panic into the fixture's error.
type processTB struct {
	testing.TB // nil: only the methods below are used
	name       string
	mu         sync.Mutex
	cleanups   []func()
}

func (*processTB) Helper()                           {}
func (p *processTB) Name() string                    { return p.name }
func (*processTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (*processTB) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (*processTB) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (*processTB) Error(args ...any)                 { panic(fmt.Sprint(args...)) }
func (*processTB) Logf(string, ...any)               {}
func (*processTB) Log(...any)                        {}
func (*processTB) Failed() bool                      { return false }
func (*processTB) Context() context.Context          { return context.Background() }

func (p *processTB) Cleanup(f func()) {
	p.mu.Lock()
	p.cleanups = append(p.cleanups, f)
	p.mu.Unlock()
}

func (p *processTB) TempDir() string {
	dir, err := os.MkdirTemp("", "contractflow-bench-")
	if err != nil {
		panic(err)
	}
	p.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// cleanup runs the registered functions last first, as testing does.
func (p *processTB) cleanup() {
	p.mu.Lock()
	fs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
