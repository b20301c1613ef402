package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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

func TestPhasePath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		phase  string
		bypass bool
		want   []string
	}{
		{"new", "DangSoanThao", false, []string{"DangSoanThao"}},
		{"published", "DaPhatHanh", false, normalPath},
		{"bypassed", "DangTrinhKy", true, []string{"DangSoanThao", "DangDamPhan", "DangGopY", "DangInKy", "DangTrinhKy"}},
		{"rejected", "TuChoi", false, []string{"DangSoanThao", "DangDamPhan", "DangGopY", "DangInKy", "DangKiemTraCCM", "DangTrinhKy", "TuChoi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := phasePath(tc.phase, tc.bypass); !slices.Equal(got, tc.want) {
				t.Fatalf("phasePath(%s, %v) = %v, want %v", tc.phase, tc.bypass, got, tc.want)
			}
		})
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
		return &report{When: time.Now(), DB: db, Data: &dataset{sizes: sizes{Contracts: 100_000}, ByPhase: map[string]int{}},
			Limits: limits{Clients: 8, Duration: time.Second, MaxOps: 10}, Raw: map[string]result{}}
	}
	for _, db := range []string{"Postgres", "SQLite", "SQLite"} {
		if err := writeDoc(path, run(db)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{"## SQLite", "## Postgres"} {
		if n := strings.Count(doc, want+"\n"); n != 1 {
			t.Fatalf("%q appears %d times in:\n%s", want, n, doc)
		}
	}
	if strings.Index(doc, "## SQLite") > strings.Index(doc, "## Postgres") {
		t.Fatalf("SQLite's section should come first")
	}
}
