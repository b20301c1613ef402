// Command cfbench is the end-to-end benchmark of issue 8: it builds and
// starts the server on a fresh database, loads a realistic data set, drives
// HTTP load per scenario with a fixed concurrency for a fixed time, measures
// the raw limits (database transaction, password hash, trivial Fiber
// handler) in the same run, prints the table and writes docs/benchmarks.md.
//
//	go run ./cmd/cfbench                       # SQLite, 100 000 contracts
//	go run ./cmd/cfbench --postgres 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./cmd/cfbench --contracts 5000 --duration 3s --doc ''
//
// Every loop is bounded by a count and a time; all traffic stays on
// 127.0.0.1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

type options struct {
	postgres string
	sizes    sizes
	limits   limits
	doc      string
	keep     bool
	timeout  time.Duration
	repo     string
	pprof    string
	tags     string
	set      settings
	scale    string
	sweep    string
	only     *regexp.Regexp // scenarios to run; nil: all
}

// settings collects repeated --set key=value flags as CONTRACTFLOW_*
// variables for the server.
type settings []string

func (s *settings) String() string { return strings.Join(*s, ",") }

func (s *settings) Set(v string) error {
	key, val, ok := strings.Cut(v, "=")
	if !ok || key == "" {
		return fmt.Errorf("want key=value, e.g. rateLimit.enabled=false")
	}
	*s = append(*s, "CONTRACTFLOW_"+strings.ToUpper(strings.ReplaceAll(key, ".", "_"))+"="+val)
	return nil
}

func main() {
	var o options
	fs := flag.NewFlagSet("cfbench", flag.ContinueOnError)
	fs.StringVar(&o.postgres, "postgres", "", "run on Postgres: a DSN of a server where a fresh schema bench_<random> is created and dropped (default: SQLite in a temporary folder)")
	fs.IntVar(&o.sizes.Contracts, "contracts", 100_000, "contracts in the data set")
	fs.IntVar(&o.sizes.Evaluations, "evaluations", 50_000, "purchase evaluations in the data set, with their quotations (0: no evaluation scenarios)")
	fs.IntVar(&o.sizes.Users, "users", 1_000, "users in the data set, over the 12 roles")
	fs.IntVar(&o.sizes.Suppliers, "suppliers", 2_000, "suppliers (created through the API)")
	fs.IntVar(&o.sizes.Projects, "projects", 300, "projects (created through the API)")
	fs.IntVar(&o.sizes.Departments, "departments", 8, "departments (created through the API)")
	fs.IntVar(&o.limits.Clients, "clients", 8, "concurrent clients per scenario")
	fs.DurationVar(&o.limits.Duration, "duration", 10*time.Second, "time per scenario")
	fs.IntVar(&o.limits.MaxOps, "max-requests", 200_000, "request cap per scenario")
	fs.StringVar(&o.doc, "doc", "docs/benchmarks.md", "file to update with this database's section, relative to the repository ('' to skip)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary folder (database, server log) and the Postgres schema")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "hard limit of the whole run")
	fs.StringVar(&o.repo, "repo", "", "repository root (default: found from the working folder)")
	fs.Var(&o.set, "set", "extra server configuration key=value (repeatable), e.g. --set rateLimit.enabled=false to see the limiter's cost; docs are not written")
	fs.StringVar(&o.tags, "tags", ownTags(), "build tags of the server binary (default: the tags this harness was built with; make bench passes sqlite_fts5)")
	fs.StringVar(&o.scale, "scale", "", "run the scale series instead: a fresh SQLite data set per number of contracts, e.g. 10000,100000,300000; each runs the inbox, list, detail, dashboard and transition, and the size nearest 100 000 the client sweep; writes the doc's scale section")
	fs.StringVar(&o.sweep, "sweep", "1,8,32", "with --scale: client counts of the transition and inbox sweep ('' for none)")
	fs.StringVar(&o.pprof, "pprof", "", "profile: run the server inside this process and write a CPU profile and allocation snapshots per scenario to this folder (RSS figures are then the harness's; docs are not written)")
	only := fs.String("only", "", "run only the scenarios whose name matches this regular expression (e.g. 'detail|inbox'); docs are not written")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cfbench: --only:", err)
			os.Exit(2)
		}
		o.only, o.doc = re, "" // a partial run does not replace the doc's section
	}
	if o.limits.Clients < 1 || o.limits.Duration <= 0 || o.limits.MaxOps < 1 || o.sizes.Contracts < 100 ||
		o.sizes.Users < 24 || o.sizes.Suppliers < 1 || o.sizes.Projects < 1 || o.sizes.Departments < 1 || o.sizes.Evaluations < 0 {
		fmt.Fprintln(os.Stderr, "cfbench: clients, duration, max-requests must be positive; contracts ≥ 100; users ≥ 24; suppliers, projects, departments ≥ 1")
		os.Exit(2)
	}
	if o.pprof != "" {
		if err := os.MkdirAll(o.pprof, 0o750); err != nil {
			fmt.Fprintln(os.Stderr, "cfbench:", err)
			os.Exit(1)
		}
		runtime.MemProfileRate = 64 << 10
		o.doc = ""
	}
	if len(o.set) > 0 {
		o.doc = "" // a diagnostic run, not the configuration the targets are about
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if o.scale != "" {
		if o.postgres != "" || o.pprof != "" {
			fmt.Fprintln(os.Stderr, "cfbench: --scale runs on SQLite, without --postgres or --pprof")
			os.Exit(2)
		}
		counts, err := parseInts(o.scale)
		var sweep []int
		if err == nil && o.sweep != "" {
			sweep, err = parseInts(o.sweep)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cfbench: --scale/--sweep:", err)
			os.Exit(2)
		}
		if err := runScale(ctx, o, counts, sweep); err != nil {
			fmt.Fprintln(os.Stderr, "cfbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "cfbench:", err)
		os.Exit(1)
	}
}

var began = time.Now()

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, a...))
}

func run(ctx context.Context, o options) (err error) {
	repo := o.repo
	if repo == "" {
		if repo, err = findRepo(); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "cfbench-")
	if err != nil {
		return err
	}
	if o.keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	rep := &report{When: time.Now(), Machine: describeMachine(ctx, repo), Limits: o.limits, Raw: map[string]result{}}
	logf("machine: %d cores, load average %s, CPU pressure %s; commit %s", rep.Machine.Cores, rep.Machine.LoadAvg, rep.Machine.Pressure, rep.Machine.Commit)

	bin := filepath.Join(tmp, "contractflow")
	t0 := time.Now()
	logf("building ./cmd/contractflow")
	if err := buildServer(ctx, repo, bin, o.tags); err != nil {
		return err
	}
	rep.BuildTime, rep.Tags = time.Since(t0), o.tags
	if st, err := os.Stat(bin); err == nil {
		rep.BinarySize = st.Size()
	}

	var d *database
	if o.postgres != "" {
		if d, err = postgresDatabase(ctx, o.postgres); err != nil {
			return err
		}
		defer func() {
			if o.keep {
				logf("keeping schema %s", d.schema)
				return
			}
			if derr := d.drop(); derr != nil {
				err = errors.Join(err, fmt.Errorf("drop schema %s: %w", d.schema, derr))
			}
		}()
		rep.DB = "Postgres"
		logf("Postgres schema %s on %s", d.schema, redact(o.postgres))
	} else {
		d = sqliteDatabase(tmp)
		rep.DB = "SQLite"
	}
	srv := &server{bin: bin, workDir: tmp, dbEnv: d.serverEnv(), extra: o.set, inProcess: o.pprof != ""}
	defer func() { _ = srv.stop() }()

	// 1. Fresh database: the first start migrates and seeds.
	if rep.FirstStart, err = srv.start(ctx); err != nil {
		return err
	}
	logf("server ready on a fresh database in %s; reading the workflows", ms(rep.FirstStart))
	c := newClient(srv.base, o.limits.Clients)
	g, evalGraphs, err := fetchGraphs(ctx, c)
	if err != nil {
		return err
	}
	if err := srv.stop(); err != nil {
		return err
	}

	// 2. The data set, from the modules' seed steps, with the server stopped.
	logf("contractflow seed --demo-size %d (%d users, %d evaluations)", o.sizes.Contracts, o.sizes.Users, o.sizes.Evaluations)
	ds, err := load(ctx, srv, d, o.sizes, g, evalGraphs)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	rep.Data = ds
	rep.DBSize = d.sizeOnDisk(ctx)
	rep.DBVersion = dbVersion(ctx, d)
	logf("seed done in %s: %d approvals, %d comments, %s on disk", ms(ds.SeedTime), ds.Approvals, ds.Comments, mib(rep.DBSize))

	// 3. Start with the data set: start-up time and idle RSS.
	var prof *profiler
	if o.pprof != "" {
		prof = &profiler{dir: o.pprof, name: "startup"}
		prof.snapshot("allocs-before")
	}
	if rep.Startup, err = srv.start(ctx); err != nil {
		return err
	}
	if prof != nil {
		prof.snapshot("allocs")
	}
	c = newClient(srv.base, 2*o.limits.Clients)
	time.Sleep(3 * time.Second)
	idle := treeProportional(srv.pid())
	rep.IdleRSS, rep.IdleAnon, rep.IdleFile = idle.rss, idle.anon, idle.file
	logf("server ready with the data set in %s; idle RSS %s", ms(rep.Startup), mib(rep.IdleRSS))
	if o.pprof != "" {
		writeHeap(filepath.Join(o.pprof, "idle.heap.pprof"))
	}

	s := &session{srv: srv, c: c, ds: ds, l: o.limits, prof: prof}
	if prof != nil {
		logf("profiling: the server runs in this process; profiles go to %s", o.pprof)
	}
	if err := s.signIn(ctx, o.limits.Clients); err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	if err := s.signInProcurement(ctx, o.limits.Clients); err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	logf("the list matches %d contracts, the Finance inbox holds %d", s.matches["list"], s.matches["inbox"])

	// 4. HTTP scenarios, each raw limit measured next to the scenarios
	// compared with it, so that the ratios see the same background load
	// of the shared machine.
	logf("raw: trivial Fiber handler")
	rf, err := rawFiberHandler(ctx, o.limits)
	if err != nil {
		return fmt.Errorf("fiber handler: %w", err)
	}
	rep.Raw[rawFiber] = rf
	logf("  %s req/s, p99 %s", rate(rf.rate()), ms(rf.pct(.99)))
	runScenario := func(sc scenario) {
		if o.only != nil && !o.only.MatchString(sc.name) {
			return
		}
		logf("scenario %s: %d clients, %s", sc.name, sc.limits.Clients, sc.limits.Duration)
		var r result
		if sc.rawOf == rawHash {
			r, rep.Raw[rawHash] = s.besideHash(ctx, sc)
		} else {
			r = s.measure(ctx, sc)
		}
		if strings.HasPrefix(sc.name, "export") && r.Ops > 0 {
			r.Note += fmt.Sprintf("; %s per file", mib(s.exported.Load()))
		}
		rep.HTTP = append(rep.HTTP, r)
		logf("  %s req/s, p50 %s, p99 %s, %d errors, server CPU/req %s, peak RSS %s", rate(r.rate()), ms(r.pct(.5)), ms(r.pct(.99)),
			r.Errors, cpuMS(r.cpuPerOp()), mib(r.PeakRSS))
		if r.FirstErr != "" {
			logf("  first error: %s", r.FirstErr)
		}
	}
	for _, sc := range s.scenarios() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		runScenario(sc)
	}
	if o.only == nil || o.only.MatchString("mixed") {
		logf("scenario mixed: %d login clients + %d list clients, %s", o.limits.Clients, o.limits.Clients, o.limits.Duration)
		lg, ls := s.mixed(ctx)
		rep.HTTP = append(rep.HTTP, lg, ls)
		logf("  logins %s/s; list %s req/s, p99 %s", rate(lg.rate()), rate(ls.rate()), ms(ls.pct(.99)))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	runScenario(s.transition())
	runScenario(s.create())
	if o.only == nil || o.only.MatchString(budgetPlain) || o.only.MatchString(budgetLine) {
		logf("scenarios %s / %s: %d clients, alternating rounds", budgetPlain, budgetLine, o.limits.Clients)
		for _, r := range s.budgetMoves(ctx) {
			rep.HTTP = append(rep.HTTP, r)
			logf("  %s: %s moves, %s req/s, p99 %s, %d errors, server CPU/move %s", r.Name, thousands(r.Ops), rate(r.rate()), ms(r.pct(.99)), r.Errors, cpuMS(r.cpuPerOp()))
			if r.FirstErr != "" {
				logf("  first error: %s", r.FirstErr)
			}
		}
	}
	for _, sc := range s.procurementWrites() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		runScenario(sc)
	}
	s.notePeak()
	rep.PeakRSS = s.peakRSS
	if err := srv.stop(); err != nil {
		return err
	}

	// 5. The raw transaction, with the server stopped.
	logf("raw: transition transaction on the same database (%d contracts)", len(ds.PoolRaw))
	rt, err := rawTransaction(ctx, d, g, ds.PoolRaw, ds.RawActorID, o.limits)
	if err != nil {
		return fmt.Errorf("raw transaction: %w", err)
	}
	rep.Raw[rawTx] = rt
	logf("  %s tx/s, p99 %s", rate(rt.rate()), ms(rt.pct(.99)))
	if pd := ds.Proc; pd != nil && len(pd.EvalPoolRaw) > 0 {
		logf("raw: evaluation transaction on the same database (%d evaluations)", len(pd.EvalPoolRaw))
		re, err := rawEvaluationTransaction(ctx, d, pd.Graphs, pd.EvalPoolRaw, pd.EvalActorID, o.limits)
		if err != nil {
			return fmt.Errorf("raw evaluation transaction: %w", err)
		}
		rep.Raw[rawEvalTx] = re
		logf("  %s tx/s, p99 %s", rate(re.rate()), ms(re.pct(.99)))
	}
	checkBudgets(ctx, d, ds.Proc)
	if pd := ds.Proc; pd != nil && pd.BudgetCheckMeasured {
		logf("budget lines: %s", pd.BudgetCheck)
	}

	rep.ratios()
	rep.Total = time.Since(began)
	if rep.Machine.Cores > 0 {
		rep.Notes = append(rep.Notes, "Load average at the end: "+loadAverage()+"; CPU pressure "+cpuPressure()+".")
	}
	rep.Notes = append(rep.Notes,
		"The SLA job's first run is pushed past the end of the run (sla.firstRunDelay = 1h) so that it does not move the overdue contracts in the middle of a scenario.",
		"The raw transactions run with the server stopped, on the same database: next to the server's writer on SQLite it would measure the two writers' fight for the file lock.")
	if d.driver == "postgres" {
		rep.Notes = append(rep.Notes, "VACUUM (ANALYZE) of every table of the schema ends the bulk load (contractflow seed), as autovacuum would within a minute or so: without the visibility map the planner prefers sequential scans to the covering indexes.")
	} else {
		rep.Notes = append(rep.Notes, "No ANALYZE after the bulk load: the service never runs it, so the planner works without statistics, as in production.")
	}
	if len(o.set) > 0 {
		rep.Notes = append(rep.Notes, "Extra server settings of this run: "+strings.Join(o.set, ", ")+".")
	}
	if d.driver == "postgres" {
		rep.Notes = append(rep.Notes, "Server CPU/req counts the contractflow process only; Postgres's own work runs in its backends.")
	}
	if o.pprof != "" {
		rep.Notes = append(rep.Notes, "Profiled run (--pprof): the server ran inside the harness, so RSS, CPU and rates include the load generator and the profiler.")
	}
	md := rep.markdown()
	fmt.Println(md)
	if o.doc != "" {
		path := o.doc
		if !filepath.IsAbs(path) {
			path = filepath.Join(repo, path)
		}
		if err := writeDoc(path, strings.ToLower(rep.DB), md); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		logf("wrote the %s section of %s", rep.DB, path)
	}
	return nil
}

// ownTags returns the -tags this program was built with, so that the server
// and the harness's own SQLite (which writes through the server's FTS5
// triggers during the bulk load) are built alike.
func ownTags() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				return s.Value
			}
		}
	}
	return ""
}

// findRepo walks up from the working folder to the go.mod of the module.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for range 64 {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/contractflow/contractflow\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("run from inside the contractflow repository (or pass --repo)")
}

// dbVersion names the engine and its version.
func dbVersion(ctx context.Context, d *database) string {
	db, err := d.open(1)
	if err != nil {
		return d.driver
	}
	defer db.Close()
	var v string
	if d.driver == "sqlite" {
		var fts5 int
		_ = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_module_list WHERE name = 'fts5'").Scan(&fts5)
		search := "FTS5 trigram search indexes"
		if fts5 == 0 {
			search = "no FTS5: searches scan (build with -tags sqlite_fts5, as make does)"
		}
		if db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v) == nil {
			return "SQLite " + v + " (mattn/go-sqlite3, WAL, synchronous=NORMAL; " + search + ")"
		}
		return "SQLite"
	}
	if db.QueryRowContext(ctx, "SHOW server_version").Scan(&v) == nil {
		return "PostgreSQL " + v + " on 127.0.0.1"
	}
	return "PostgreSQL"
}
