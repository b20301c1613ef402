package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"time"
)

// session holds what the scenarios need: the server, the data set and the
// tokens of the users they act as.
type session struct {
	srv      *server
	c        *client
	ds       *dataset
	l        limits
	admin    string
	finance  string
	drafters []string       // one token per client where there are enough drafters
	matches  map[string]int // totalCount of the list and the inbox, checked before the load
	peakRSS  int64          // highest VmHWM seen over the whole run
	prof     *profiler      // --pprof: profiles per scenario
	exported atomic.Int64
	proc     procTokens // evaluations.go
}

// scenario is one HTTP load of issue 8 step 3.
type scenario struct {
	name   string
	rawOf  string // the raw limit of its ratio: rawFiber, rawHash or rawTx
	limits limits
	warmup int // unmeasured requests first (GETs only)
	fn     op
	note   string
}

const (
	rawFiber = "trivial Fiber handler"
	rawHash  = "argon2id hash"
	rawTx    = "raw transition transaction"
)

// login returns an access token.
func (s *session) login(ctx context.Context, email, password string) (string, error) {
	var out struct{ AccessToken string }
	err := s.c.call(ctx, http.MethodPost, "/api/auth/login", "", mustJSON(map[string]string{"email": email, "password": password}), 200, &out)
	return out.AccessToken, err
}

// signIn logs in the users the scenarios act as.
func (s *session) signIn(ctx context.Context, clients int) error {
	var err error
	if s.admin, err = s.login(ctx, adminEmail, adminPassword); err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	if s.finance, err = s.login(ctx, s.ds.FinanceEmail, benchPassword); err != nil {
		return fmt.Errorf("finance user: %w", err)
	}
	s.drafters = nil
	for i := range min(clients, len(s.ds.DrafterEmails)) {
		t, err := s.login(ctx, s.ds.DrafterEmails[i], benchPassword)
		if err != nil {
			return fmt.Errorf("drafter %s: %w", s.ds.DrafterEmails[i], err)
		}
		s.drafters = append(s.drafters, t)
	}
	return nil
}

// count returns the totalCount of a paged list: a check that the scenario
// reads what it should (a search that matches nothing is fast and useless).
func (s *session) count(ctx context.Context, path, token string) (int, error) {
	var page struct{ TotalCount int }
	err := s.c.call(ctx, http.MethodGet, path, token, nil, http.StatusOK, &page)
	return page.TotalCount, err
}

// check counts what the list and the inbox scenarios match.
func (s *session) check(ctx context.Context) error {
	s.matches = map[string]int{}
	for name, q := range map[string]struct{ path, token string }{
		"list":  {s.listPath(), s.admin},
		"inbox": {"/api/contracts/inbox?page=1&pageSize=20", s.finance},
	} {
		n, err := s.count(ctx, q.path, q.token)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if n == 0 {
			return fmt.Errorf("%s %s matches no contract: the data set or the search index is wrong", name, q.path)
		}
		s.matches[name] = n
	}
	return nil
}

func (s *session) get(path string, token func() string) op {
	return func(ctx context.Context, _, _ int) error {
		return s.c.call(ctx, http.MethodGet, path, token(), nil, http.StatusOK, nil)
	}
}

func (s *session) loginOp() op {
	emails := s.ds.LoginEmails
	bodies := make([][]byte, len(emails))
	for i, e := range emails {
		bodies[i] = mustJSON(map[string]string{"email": e, "password": benchPassword})
	}
	return func(ctx context.Context, _, seq int) error {
		return s.c.call(ctx, http.MethodPost, "/api/auth/login", "", bodies[seq%len(bodies)], http.StatusOK, nil)
	}
}

// listPath is page 1 of the contract list with a phase filter and a search,
// as an administrator (who sees every contract, so the filter and the
// search do all the narrowing).
func (s *session) listPath() string {
	return "/api/contracts?phase=" + s.ds.ExportPhase + "&search=" + url.QueryEscape(searchWord) + "&page=1&pageSize=20"
}

// scenarios lists the HTTP scenarios but the mixed one and the transition,
// in the order they run. The export of every contract goes first, so its
// peak RSS is measured over the idle server, not over the SQLite page
// caches that the dashboard's scans fill in every reader connection. Then
// the reads, the smaller export, and the logins last, because eight
// concurrent argon2id hashes of 19 MiB leave the heap (and the RSS of every
// later scenario) large. The transition (see transition) runs after them
// all, as it changes the data and its raw limit runs right after it.
func (s *session) scenarios() []scenario {
	l := s.l
	admin := func() string { return s.admin }
	ds := s.ds
	detail := func(ctx context.Context, _, seq int) error {
		// A multiplicative hash of seq spreads the reads over every contract.
		id := ds.LiveIDs[int(uint64(seq)*2654435761%uint64(len(ds.LiveIDs)))]
		return s.c.call(ctx, http.MethodGet, "/api/contracts/"+id, s.admin, nil, http.StatusOK, nil)
	}
	export := func(path string) op {
		return func(ctx context.Context, _, _ int) error {
			n, err := s.c.download(ctx, path, s.admin)
			s.exported.Store(n)
			return err
		}
	}
	exportWindow := max(l.Duration, 30*time.Second)
	return slices.Insert([]scenario{
		{name: "export 100k rows", rawOf: rawFiber, limits: limits{Clients: 1, Duration: exportWindow, MaxOps: 3},
			fn:   export("/api/reports/contracts/export"),
			note: fmt.Sprintf("GET /api/reports/contracts/export, every live contract (%s rows), sequential", thousands(len(ds.LiveIDs)))},
		{name: "list page 1", rawOf: rawFiber, limits: l, warmup: 50, fn: s.get(s.listPath(), admin),
			note: fmt.Sprintf("GET /api/contracts?phase=%s&search=%s&page=1&pageSize=20 as Admin (%s matches)", ds.ExportPhase, searchWord, thousands(s.matches["list"]))},
		{name: "list page 1, no filter", rawOf: rawFiber, limits: l, warmup: 50, fn: s.get("/api/contracts?page=1&pageSize=20", admin),
			note: fmt.Sprintf("GET /api/contracts?page=1&pageSize=20 as Admin (every live contract: %s)", thousands(len(ds.LiveIDs)))},
		{name: "inbox page 1", rawOf: rawFiber, limits: l, warmup: 50, fn: s.get("/api/contracts/inbox?page=1&pageSize=20", func() string { return s.finance }),
			note: fmt.Sprintf("GET /api/contracts/inbox?page=1&pageSize=20 as a Finance user (%s contracts in the inbox)", thousands(s.matches["inbox"]))},
		{name: "contract detail", rawOf: rawFiber, limits: l, warmup: 50, fn: detail,
			note: "GET /api/contracts/{id} as Admin over every live contract"},
		{name: "dashboard", rawOf: rawFiber, limits: l, warmup: 10, fn: s.get("/api/reports/dashboard", admin),
			note: "GET /api/reports/dashboard as Admin"},
		{name: "export 10k rows", rawOf: rawFiber, limits: limits{Clients: min(2, l.Clients), Duration: l.Duration, MaxOps: 50},
			fn:   export("/api/reports/contracts/export?phase=" + ds.ExportPhase),
			note: fmt.Sprintf("GET /api/reports/contracts/export?phase=%s (%s rows)", ds.ExportPhase, thousands(ds.ExportRows))},
		{name: "login", rawOf: rawHash, limits: l, fn: s.loginOp(),
			note: fmt.Sprintf("POST /api/auth/login, %s distinct users round-robin", thousands(len(ds.LoginEmails)))},
	}, 5, s.evaluationInbox()...) // after the contract detail
}

// transition makes the initial phase's normal move (as the engine's
// definition has it) on distinct contracts as Drafters, and stops when the
// pool runs out.
func (s *session) transition() scenario {
	ds := s.ds
	move := mustJSON(map[string]string{"toPhase": ds.NextPhase})
	fn := func(ctx context.Context, w, seq int) error {
		if seq >= len(ds.PoolHTTP) {
			return errExhausted
		}
		return s.c.call(ctx, http.MethodPost, "/api/contracts/"+ds.PoolHTTP[seq]+"/transitions", s.drafters[w%len(s.drafters)], move, http.StatusOK, nil)
	}
	return scenario{name: "transition", rawOf: rawTx, limits: s.l, fn: fn,
		note: fmt.Sprintf("POST /api/contracts/{id}/transitions %s→%s as Drafters, distinct contracts (%s available)", ds.Graph.Initial, ds.NextPhase, thousands(len(ds.PoolHTTP)))}
}

// create drafts new contracts as Drafters, each naming a supplier and a
// project (skewed as in the data set), round-robin over the contract types
// that need a project.
func (s *session) create() scenario {
	ds := s.ds
	types := []string{"Subcontract", "PieceWork", "Supply", "Service", "Purchase"}
	fn := func(ctx context.Context, w, seq int) error {
		body := mustJSON(map[string]any{
			"title":        fmt.Sprintf("Hợp đồng %s đợt %d", titleItems[seq%len(titleItems)], seq),
			"contractType": types[seq%len(types)],
			"supplierId":   ds.SupplierIDs[int(uint64(seq)*2654435761%uint64(len(ds.SupplierIDs)))],
			"projectId":    ds.ProjectIDs[int(uint64(seq)*40503%uint64(len(ds.ProjectIDs)))],
			"value":        json.Number(fmt.Sprint(20_000_000 + (seq%500)*1_000_000)),
		})
		return s.c.call(ctx, http.MethodPost, "/api/contracts", s.drafters[w%len(s.drafters)], body, http.StatusCreated, nil)
	}
	return scenario{name: "contract create", limits: s.l, fn: fn,
		note: "POST /api/contracts as Drafters with a supplier and a project (five types that need a project, round-robin)"}
}

// measure runs one scenario and records the server's peak RSS during it:
// VmHWM after clearing it, or the 20 ms samples of VmRSS where clearing is
// not allowed.
func (s *session) measure(ctx context.Context, sc scenario) result {
	if sc.warmup > 0 {
		drive(ctx, sc.name+" warm-up", limits{Clients: sc.limits.Clients, Duration: time.Second, MaxOps: sc.warmup}, sc.fn)
	}
	s.settle(ctx)
	s.notePeak()
	reset := s.srv.resetPeak()
	sampler := sampleRSS(s.srv.pid())
	// Only a login may start the hashing child (sc.rawOf is the hash).
	precise := sc.rawOf != rawHash
	cpu := treeCPU(s.srv.pid(), precise)
	s.prof.begin(sc.name)
	r := drive(ctx, sc.name, sc.limits, sc.fn)
	s.prof.end()
	r.CPU = treeCPU(s.srv.pid(), precise) - cpu
	sampled := sampler.peak()
	_, hwm := s.srv.memory()
	r.PeakRSS = sampled
	if reset && hwm > sampled {
		r.PeakRSS = hwm
	}
	s.peakRSS = max(s.peakRSS, hwm, sampled)
	r.Group, r.RawOf, r.Note = "http", sc.rawOf, sc.note
	return r
}

// alternate runs two sides in turns, rounds times each (A then B, then B
// then A, …), so that whatever else loads the shared machine, and whatever
// drifts over the run, falls on both alike, and folds each side's rounds
// into one result. after, if not nil, sees each round's pair.
func alternate(rounds int, sides [2]func(round int) result, after func(round int, r [2]result)) [2]result {
	var out [2]result
	for k := range rounds {
		var got [2]result
		for j := range 2 {
			i := j ^ k%2
			got[i] = sides[i](k)
			out[i].add(got[i])
		}
		if after != nil {
			after(k, got)
		}
	}
	return out
}

// hashRounds is how many rounds the login and the raw hash each run in
// turns: login, raw, raw, login.
const hashRounds = 2

// besideHash measures the login scenario sc in rounds alternating with the
// raw hash, each round sc's whole window, so that the ratio compares the two
// under the same load of the host: the hash is bound by memory, whose speed
// on this shared host drifts over seconds. Rounds of a quarter window
// weigh the login down: each login round follows a quiet second
// (measure's settle), after which the hashing child has returned its
// memory to the system, and faulting it in again weighs on a short round
// (one full run with 1.25 s rounds gave 74.4 %, runs with 5 s rounds
// 82–92 %).
func (s *session) besideHash(ctx context.Context, sc scenario) (login, raw result) {
	// Each side first fills its heap unmeasured: the first 19 MiB blocks
	// of a process are fresh pages, whose faults cost the first round
	// (then as few as 14 hashes/s against 90 in the next rounds).
	warm := limits{Clients: sc.limits.Clients, Duration: time.Second, MaxOps: 2 * sc.limits.Clients}
	drive(ctx, sc.name+" warm-up", warm, sc.fn)
	rawHashRun(ctx, warm)
	r := alternate(hashRounds, [2]func(int) result{
		func(k int) result {
			round := sc
			round.name = fmt.Sprintf("%s, round %d", sc.name, k+1)
			return s.measure(ctx, round)
		},
		func(int) result { return rawHashRun(ctx, sc.limits) },
	}, func(k int, r [2]result) {
		logf("  round %d/%d: %s logins/s (server CPU/login %s), %s raw hashes/s (CPU/hash %s)", k+1, hashRounds,
			rate(r[0].rate()), cpuMS(r[0].cpuPerOp()), rate(r[1].rate()), cpuMS(r[1].cpuPerOp()))
	})
	login, raw = r[0], r[1]
	login.Name, raw.Name = sc.name, rawHash
	login.Note = fmt.Sprintf("%s; %d rounds alternating with the raw hash's", sc.note, hashRounds)
	raw.Note = fmt.Sprintf("%s; %d rounds alternating with the login's", rawHashNote, hashRounds)
	return login, raw
}

// settle waits until the server has finished the background work earlier
// load left behind (the search index catching up on moved contracts, a WAL
// checkpoint, a collection), so that it is not counted against the next
// scenario: until it used at most one 10 ms tick of CPU in half a second,
// for up to 20 s.
func (s *session) settle(ctx context.Context) {
	const window, quiet, most = 500 * time.Millisecond, 10 * time.Millisecond, 20 * time.Second
	began := time.Now()
	for time.Since(began) < most {
		cpu := treeCPU(s.srv.pid(), true)
		select {
		case <-ctx.Done():
			return
		case <-time.After(window):
		}
		if treeCPU(s.srv.pid(), true)-cpu <= quiet {
			if waited := time.Since(began); waited > 2*window {
				logf("  (waited %s for the server to settle)", waited.Round(100*time.Millisecond))
			}
			return
		}
	}
	logf("  (the server was still busy after %s)", most)
}

// notePeak keeps the whole run's peak before a reset of VmHWM loses it.
func (s *session) notePeak() {
	if _, hwm := s.srv.memory(); hwm > s.peakRSS {
		s.peakRSS = hwm
	}
}

// mixed runs logins at full speed and the list page 1 at the same time, from
// two groups of l.Clients clients each.
func (s *session) mixed(ctx context.Context) (login, list result) {
	s.notePeak()
	reset := s.srv.resetPeak()
	sampler := sampleRSS(s.srv.pid())
	s.prof.begin("mixed")
	done := make(chan result, 1)
	go func() { done <- drive(ctx, "mixed: login", s.l, s.loginOp()) }()
	list = drive(ctx, "mixed: list page 1", s.l, s.get(s.listPath(), func() string { return s.admin }))
	login = <-done
	s.prof.end()
	peak := sampler.peak()
	if _, hwm := s.srv.memory(); reset && hwm > peak {
		peak = hwm
	}
	s.peakRSS = max(s.peakRSS, peak)
	login.PeakRSS, list.PeakRSS = peak, peak
	login.Group, list.Group = "http", "http"
	login.RawOf, list.RawOf = rawHash, rawFiber
	login.Note = fmt.Sprintf("logins at full speed (%d clients) while the list runs", s.l.Clients)
	list.Note = fmt.Sprintf("list page 1 (%d more clients) while logins run", s.l.Clients)
	return login, list
}
