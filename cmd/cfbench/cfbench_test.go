package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var r result
	for i := 1; i <= 100; i++ {
		r.Lat = append(r.Lat, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		p    float64
		want time.Duration
	}{
		{"p50", .50, 50 * time.Millisecond},
		{"p95", .95, 95 * time.Millisecond},
		{"p99", .99, 99 * time.Millisecond},
		{"max", 1, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.pct(tc.p); got != tc.want {
				t.Fatalf("pct(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
	if got := (result{}).pct(.99); got != 0 {
		t.Fatalf("pct of nothing = %v", got)
	}
}

func TestDriveStopsAtTheCapAndWhenWorkRunsOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		supply int
		want   int
	}{
		{"request cap", 37, 1000, 37},
		{"work exhausted", 1000, 23, 23},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := drive(context.Background(), tc.name, limits{Clients: 4, Duration: 5 * time.Second, MaxOps: tc.max},
				func(_ context.Context, _, seq int) error {
					if seq >= tc.supply {
						return errExhausted
					}
					return nil
				})
			if r.Ops != tc.want || r.Errors != 0 {
				t.Fatalf("ops %d errors %d, want %d and 0", r.Ops, r.Errors, tc.want)
			}
		})
	}
}

// alternate runs the sides ABBA and folds each side's rounds.
func TestAlternateTakesTurnsAndFoldsEachSide(t *testing.T) {
	var order []string
	side := func(name string, ops int) func(int) result {
		return func(k int) result {
			order = append(order, fmt.Sprintf("%s%d", name, k))
			return result{Ops: ops, Elapsed: time.Second, Lat: []time.Duration{time.Duration(ops)}}
		}
	}
	var pairs int
	got := alternate(3, [2]func(int) result{side("a", 1), side("b", 2)}, func(k int, r [2]result) {
		if r[0].Ops != 1 || r[1].Ops != 2 {
			t.Errorf("round %d saw %d and %d ops", k, r[0].Ops, r[1].Ops)
		}
		pairs++
	})
	if want := []string{"a0", "b0", "b1", "a1", "a2", "b2"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if pairs != 3 || got[0].Ops != 3 || got[1].Ops != 6 || got[1].Elapsed != 3*time.Second || len(got[1].Lat) != 3 {
		t.Fatalf("pairs %d, folded %+v and %+v", pairs, got[0], got[1])
	}
}

// testGraph is contract-default v1 as the engine serves it (the moves that
// matter to the data set).
func testGraph(t *testing.T) *graph {
	t.Helper()
	step := func(p string, h int, terminal bool, roles ...string) graphStep {
		return graphStep{Phase: p, SLAHours: h, Terminal: terminal, InboxRoles: roles}
	}
	move := func(from, to, kind, guard string, normal bool, roles ...string) graphMove {
		return graphMove{From: from, To: to, Kind: workflowdesigner.MoveKind(kind), Guard: guard, Normal: normal, Roles: roles}
	}
	g := &graph{ID: "x", Key: "contract-default", Version: 1, Initial: "DangSoanThao", steps: map[string]graphStep{}, moves: []graphMove{
		move("DangSoanThao", "DangDamPhan", "forward", "", true, "Drafter"),
		move("DangDamPhan", "DangGopY", "forward", "", true, "Drafter"),
		move("DangDamPhan", "DangSoanThao", "return", "", false, "Drafter"),
		move("DangGopY", "DangInKy", "forward", "", true, "ProjectManager"),
		move("DangInKy", "DangKiemTraCCM", "forward", "!"+bypassFact, true, "Drafter"),
		move("DangInKy", "DangTrinhKy", "bypass", bypassFact, true, "Drafter"),
		move("DangKiemTraCCM", "DangTrinhKy", "forward", "", true, "CostControl"),
		move("DangTrinhKy", "DangDongDau", "forward", "", true, "Director"),
		move("DangTrinhKy", "TuChoi", "reject", "", false, "Director"),
		move("DangDongDau", "DaPhatHanh", "forward", "", true, "HrAdmin"),
	}}
	for _, s := range []graphStep{step("DangSoanThao", 168, false, "Drafter"), step("DangDamPhan", 120, false), step("DangGopY", 72, false, "Finance"),
		step("DangInKy", 48, false), step("DangKiemTraCCM", 48, false), step("DangTrinhKy", 72, false), step("DangDongDau", 24, false),
		step("DaPhatHanh", 0, true), step("TuChoi", 0, true)} {
		g.steps[s.Phase] = s
	}
	if err := g.derive(); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGraphPaths(t *testing.T) {
	g := testGraph(t)
	normal := []string{"DangSoanThao", "DangDamPhan", "DangGopY", "DangInKy", "DangKiemTraCCM", "DangTrinhKy", "DangDongDau", "DaPhatHanh"}
	if !slices.Equal(g.Normal, normal) || g.RejectFrom != "DangTrinhKy" || g.Reject != "TuChoi" {
		t.Fatalf("normal %v, reject %s → %s", g.Normal, g.RejectFrom, g.Reject)
	}
	if got := g.walk(true); !slices.Equal(got, []string{"DangSoanThao", "DangDamPhan", "DangGopY", "DangInKy", "DangTrinhKy", "DangDongDau", "DaPhatHanh"}) {
		t.Errorf("bypassed path %v", got)
	}
	if p := g.inboxPhase("Finance"); p != "DangGopY" {
		t.Errorf("Finance inbox phase %q", p)
	}
}

func TestRebindNumbersPostgresPlaceholders(t *testing.T) {
	pg := &database{driver: "postgres"}
	if got := pg.rebind("a = ? AND b = ?"); got != "a = $1 AND b = $2" {
		t.Fatalf("rebind = %q", got)
	}
	lite := &database{driver: "sqlite"}
	if got := lite.rebind("a = ?"); got != "a = ?" {
		t.Fatalf("rebind = %q", got)
	}
}

// A run on one database must keep the other database's section.
func TestWriteDocReplacesOnlyItsSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	run := func(db string) *report {
		return &report{When: time.Now(), DB: db, Data: &dataset{sizes: sizes{Contracts: 100_000}, ByPhase: map[string]int{}, Graph: testGraph(t)},
			Limits: limits{Clients: 8, Duration: time.Second, MaxOps: 10}, Raw: map[string]result{}}
	}
	scale := &scaleReport{When: time.Now(), Limits: limits{Clients: 8, Duration: time.Second, MaxOps: 10},
		Points: []scalePoint{{Contracts: 10, Results: map[string]result{}}}}
	for _, db := range []string{"Postgres", "SQLite", "scale", "SQLite"} {
		md, key := "", strings.ToLower(db)
		if db == "scale" {
			md = scale.markdown()
		} else {
			md = run(db).markdown()
		}
		if err := writeDoc(path, key, md); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{"## SQLite", "## Scale (SQLite)", "## Postgres"} {
		if n := strings.Count(doc, want+"\n"); n != 1 {
			t.Fatalf("%q appears %d times in:\n%s", want, n, doc)
		}
	}
	if i, j, k := strings.Index(doc, "## SQLite"), strings.Index(doc, "## Scale"), strings.Index(doc, "## Postgres"); i > j || j > k {
		t.Fatalf("want the sections in the order SQLite, scale, Postgres")
	}
}
