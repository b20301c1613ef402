package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The scale series (--scale) loads one fresh SQLite data set per size and
// measures the server CPU per request of the reads and the transition at
// each, to show how they grow with the data; at the size nearest 100 000
// it also sweeps the number of clients of the transition and the inbox.

// scaleScenarios are the scenarios of the series, in the order they run.
var scaleScenarios = []string{"inbox page 1", "list page 1", "contract detail", "dashboard", "transition"}

// scalePoint is one size of the series.
type scalePoint struct {
	Contracts, Live int
	Load            time.Duration // seed --demo-size and reading the data set back
	Results         map[string]result
}

type scaleReport struct {
	When       time.Time
	Machine    machine
	DBVersion  string
	Limits     limits
	Sweep      []int
	SweepAt    int // contracts of the sweep's data set
	Points     []scalePoint
	SweepRuns  []result // Name is the scenario; Clients the sweep's
	LoadAtEnd  string
	Total      time.Duration
	Unfinished string // why the series stopped early, if it did
}

// parseInts reads "10000,100000,300000".
func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// runScale runs the series; a size that fails ends it, and what finished is
// still written with the reason.
func runScale(ctx context.Context, o options, counts, sweep []int) error {
	repo := o.repo
	var err error
	if repo == "" {
		if repo, err = findRepo(); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "cfbench-scale-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(tmp)
	}
	rep := &scaleReport{When: time.Now(), Machine: describeMachine(ctx, repo), Limits: o.limits, Sweep: sweep}
	logf("scale series %v on SQLite; machine load average %s; commit %s", counts, rep.Machine.LoadAvg, rep.Machine.Commit)
	bin := filepath.Join(tmp, "contractflow")
	logf("building ./cmd/contractflow")
	if err := buildServer(ctx, repo, bin, o.tags); err != nil {
		return err
	}
	rep.SweepAt = slices.MinFunc(counts, func(a, b int) int { return abs(a-100_000) - abs(b-100_000) })
	docPath := ""
	if o.doc != "" {
		docPath = o.doc
		if !filepath.IsAbs(docPath) {
			docPath = filepath.Join(repo, docPath)
		}
	}
	// write puts what has finished into the doc, so that a series stopped
	// by the clock still leaves its finished sizes there.
	write := func() error {
		rep.LoadAtEnd = loadAverage() + " (CPU pressure " + cpuPressure() + ")"
		rep.Total = time.Since(began)
		if docPath == "" {
			return nil
		}
		if err := writeDoc(docPath, "scale", rep.markdown()); err != nil {
			return fmt.Errorf("write %s: %w", docPath, err)
		}
		logf("wrote the scale section of %s", docPath)
		return nil
	}
	for i, n := range counts {
		if ctx.Err() != nil {
			rep.Unfinished = fmt.Sprintf("stopped before %s contracts: %v", thousands(n), ctx.Err())
			break
		}
		p, runs, err := scaleOne(ctx, o, bin, filepath.Join(tmp, strconv.Itoa(n)), n, n == rep.SweepAt, sweep)
		if err != nil {
			rep.Unfinished = fmt.Sprintf("stopped at %s contracts: %v", thousands(n), err)
			logf("%s", rep.Unfinished)
			break
		}
		rep.Points = append(rep.Points, p)
		rep.SweepRuns = append(rep.SweepRuns, runs...)
		if rest := counts[i+1:]; len(rest) > 0 {
			var names []string
			for _, r := range rest {
				names = append(names, thousands(r))
			}
			rep.Unfinished = "in progress when this was written; still to run: " + strings.Join(names, ", ") + " contracts"
		} else {
			rep.Unfinished = ""
		}
		if err := write(); err != nil {
			return err
		}
	}
	if len(rep.Points) == 0 {
		return fmt.Errorf("scale series: %s", rep.Unfinished)
	}
	fmt.Println(rep.markdown())
	return write()
}

func abs(n int) int { return max(n, -n) }

// scaleOne loads n contracts into a fresh SQLite database in dir and runs
// the series' scenarios on it, and the client sweep when sweepHere.
func scaleOne(ctx context.Context, o options, bin, dir string, n int, sweepHere bool, sweep []int) (p scalePoint, runs []result, err error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return p, nil, err
	}
	defer func() {
		if !o.keep {
			_ = os.RemoveAll(dir)
		}
	}()
	d := sqliteDatabase(dir)
	srv := &server{bin: bin, workDir: dir, dbEnv: d.serverEnv(), extra: o.set}
	defer func() { _ = srv.stop() }()
	if _, err := srv.start(ctx); err != nil {
		return p, nil, err
	}
	sz := o.sizes
	sz.Contracts, sz.Evaluations = n, 0
	logf("[%s contracts] loading", thousands(n))
	t0 := time.Now()
	g, evalGraphs, err := fetchGraphs(ctx, newClient(srv.base, o.limits.Clients))
	if err != nil {
		return p, nil, err
	}
	if err := srv.stop(); err != nil {
		return p, nil, err
	}
	ds, err := load(ctx, srv, d, sz, g, evalGraphs)
	if err != nil {
		return p, nil, fmt.Errorf("load: %w", err)
	}
	p = scalePoint{Contracts: n, Live: len(ds.LiveIDs), Load: time.Since(t0), Results: map[string]result{}}
	if _, err := srv.start(ctx); err != nil {
		return p, nil, err
	}
	most := o.limits.Clients
	for _, c := range sweep {
		most = max(most, c)
	}
	s := &session{srv: srv, c: newClient(srv.base, 2*most), ds: ds, l: o.limits}
	if err := s.signIn(ctx, most); err != nil {
		return p, nil, fmt.Errorf("sign in: %w", err)
	}
	if err := s.check(ctx); err != nil {
		return p, nil, err
	}
	logf("[%s contracts] loaded in %s; the list matches %d, the Finance inbox holds %d", thousands(n), ms(p.Load), s.matches["list"], s.matches["inbox"])
	byName := map[string]scenario{"transition": s.transition()}
	for _, sc := range s.scenarios() {
		byName[sc.name] = sc
	}
	for _, name := range scaleScenarios {
		if ctx.Err() != nil {
			return p, nil, ctx.Err()
		}
		sc := byName[name]
		if name == "transition" && sweepHere && len(sweep) > 0 {
			// Leave the sweep's runs their share of the pool: a fast
			// server would otherwise move every contract here.
			sc.limits.MaxOps = min(sc.limits.MaxOps, len(ds.PoolHTTP)/(len(sweep)+1))
		}
		r := s.measure(ctx, sc)
		p.Results[name] = r
		logf("[%s contracts] %s: server CPU/req %s, p99 %s, %s req/s, %d errors", thousands(n), name, cpuMS(r.cpuPerOp()), ms(r.pct(.99)), rate(r.rate()), r.Errors)
	}
	if !sweepHere {
		return p, nil, nil
	}
	used := p.Results["transition"].Ops
	for _, name := range []string{"inbox page 1", "transition"} {
		for i, c := range sweep {
			sc := byName[name]
			sc.limits.Clients = c
			if name == "transition" {
				// Each run moves contracts the runs before it have not, and
				// leaves the runs after it their share of the pool.
				from, inner := used, sc.fn
				sc.fn = func(ctx context.Context, w, seq int) error { return inner(ctx, w, from+seq) }
				sc.limits.MaxOps = min(sc.limits.MaxOps, (len(ds.PoolHTTP)-used)/(len(sweep)-i))
			}
			r := s.measure(ctx, sc)
			if name == "transition" {
				used += r.Ops
			}
			r.Name = name
			runs = append(runs, r)
			logf("[sweep] %s at %d clients: server CPU/req %s, p50 %s, p99 %s, %s req/s", name, c, cpuMS(r.cpuPerOp()), ms(r.pct(.5)), ms(r.pct(.99)), rate(r.rate()))
		}
	}
	return p, runs, nil
}

func (r *scaleReport) markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("## Scale (SQLite)\n\n")
	w("- Date: %s; git commit: %s; Go: %s\n", r.When.UTC().Format("2006-01-02 15:04 MST"), r.Machine.Commit, r.Machine.GoVersion)
	w("- Machine: %d cores (%s), load average %s (CPU pressure %s) at the start, %s at the end\n", r.Machine.Cores, r.Machine.CPU, r.Machine.LoadAvg, r.Machine.Pressure, r.LoadAtEnd)
	w("- Each size is a fresh database loaded as in the main run (no purchase evaluations); %d clients per scenario for %s (request cap %s)\n",
		r.Limits.Clients, r.Limits.Duration, thousands(r.Limits.MaxOps))
	if r.Unfinished != "" {
		w("- **The series did not finish**: %s\n", r.Unfinished)
	}
	w("\nServer CPU per request (p99 in brackets) as the data grows:\n\n| Contracts (live) |")
	for _, name := range scaleScenarios {
		w(" %s |", name)
	}
	w("\n|---|")
	for range scaleScenarios {
		w("---:|")
	}
	w("\n")
	for _, p := range r.Points {
		w("| %s (%s) |", thousands(p.Contracts), thousands(p.Live))
		for _, name := range scaleScenarios {
			h := p.Results[name]
			errs := ""
			if h.Errors > 0 {
				errs = fmt.Sprintf(", %d errors", h.Errors)
			}
			w(" %s (%s%s) |", cpuMS(h.cpuPerOp()), ms(h.pct(.99)), errs)
		}
		w("\n")
	}
	if len(r.Points) > 1 {
		first, last := r.Points[0], r.Points[len(r.Points)-1]
		w("| growth %s → %s |", thousands(first.Contracts), thousands(last.Contracts))
		for _, name := range scaleScenarios {
			a, z := first.Results[name].cpuPerOp(), last.Results[name].cpuPerOp()
			if a > 0 && z > 0 {
				w(" × %.2f |", float64(z)/float64(a))
			} else {
				w(" — |")
			}
		}
		w("\n")
	}
	w("\nData load per size (seed --demo-size):")
	for i, p := range r.Points {
		sep := ","
		if i == 0 {
			sep = ""
		}
		w("%s %s: %s", sep, thousands(p.Contracts), ms(p.Load))
	}
	w(".\n")
	if len(r.SweepRuns) > 0 {
		w("\nClient sweep at %s contracts (same data set, each transition run on contracts the runs before it left in the initial phase):\n\n", thousands(r.SweepAt))
		w("| Scenario | Clients | Requests | req/s | p50 | p95 | p99 | Errors | Server CPU/req |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, h := range r.SweepRuns {
			w("| %s | %d | %s | %s | %s | %s | %s | %d | %s |\n", h.Name, h.Clients, thousands(h.Ops), rate(h.rate()),
				ms(h.pct(.5)), ms(h.pct(.95)), ms(h.pct(.99)), h.Errors, cpuMS(h.cpuPerOp()))
		}
	}
	w("\nThe scenarios are the main run's (see its list of what each row does): the inbox is the Finance\n" +
		"user's, the list a search for \"" + searchWord + "\" in the Finance inbox's phase. The export's cost grows with\n" +
		"its rows by nature and is measured in the main run.\n")
	return b.String()
}
