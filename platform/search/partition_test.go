package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/search"
)

// TestPartitionedCountsExactly moves, edits, deletes and adds rows at
// random, syncing now and then, and after every step checks the index by
// value against a recount of the rows: the count from the index alone and
// the candidates checked as the caller does (stale ones by their text).
// It then drops the triggers, as a binary without FTS5 does, writes more,
// and checks that the index is rebuilt.
func TestPartitionedCountsExactly(t *testing.T) {
	ctx := context.Background()
	database, err := db.Open(db.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "x.db"), MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close() })
	conn := database.Conn(ctx)
	exec := func(q string, args ...any) {
		t.Helper()
		if err := conn.Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE docs (id TEXT PRIMARY KEY, phase TEXT NOT NULL, search_text TEXT NOT NULL, deleted_at TIMESTAMP NULL)`)
	words := []string{"mong", "coc", "thep", "hop dong", "ong"}
	r := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		return fmt.Sprintf("%s %s %d", words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(100))
	}
	phases := []string{"a", "b", "c"}
	n := 0
	add := func() {
		exec(`INSERT INTO docs (id, phase, search_text) VALUES (?, ?, ?)`, fmt.Sprint(n), phases[r.IntN(2)], text())
		n++
	}
	for range 60 {
		add()
	}
	p, err := search.EnsurePartitioned(ctx, database, "docs", "phase")
	if err != nil {
		t.Fatal(err)
	}
	if p == nil {
		t.Skip("SQLite without FTS5 (build with -tags sqlite_fts5)")
	}
	check := func(step string) {
		t.Helper()
		for _, ph := range phases {
			for _, q := range [][]string{{"mong"}, {"ong"}, {"hop", "coc"}, {"thep 4"}, {"zzz"}} {
				var want int64
				recount := conn.Raw(`SELECT COUNT(*) FROM docs WHERE deleted_at IS NULL AND phase = ? AND `+
					strings.Repeat("search_text LIKE ? "+db.LikeEscape+" AND ", len(q))+`true`, likeArgs(ph, q)...)
				if err := recount.Scan(&want).Error; err != nil {
					t.Fatal(err)
				}
				cands, cargs, err := p.Candidates(ctx, ph, q)
				if err != nil {
					t.Fatal(err)
				}
				count, args := p.Count("m", q)
				var got int64
				if err := conn.Raw(`WITH m(rid, filed) AS MATERIALIZED (`+cands+`) SELECT `+count,
					append(cargs, args...)...).Scan(&got).Error; err != nil {
					t.Fatal(err)
				}
				like, largs := search.Likes("docs", q)
				var checked int64
				err = conn.Raw(`WITH m(rid, filed) AS (`+cands+`) SELECT COUNT(*) FROM docs WHERE deleted_at IS NULL AND phase = ?
					AND docs.rowid IN (SELECT rid FROM m) AND (NOT `+p.Stale()+` OR (`+like+`))`,
					append(append(cargs, ph), largs...)...).Scan(&checked).Error
				if err != nil {
					t.Fatal(err)
				}
				if got != want || checked != want {
					t.Fatalf("%s: %s %q: count %d, candidates %d, a recount finds %d", step, ph, q, got, checked, want)
				}
			}
		}
	}
	check("all pending")
	for i := range 300 {
		id := fmt.Sprint(r.IntN(n))
		switch r.IntN(6) {
		case 0, 1:
			exec(`UPDATE docs SET phase = ? WHERE id = ?`, phases[r.IntN(len(phases))], id)
		case 2:
			exec(`UPDATE docs SET search_text = ? WHERE id = ?`, text(), id)
		case 3:
			exec(`UPDATE docs SET deleted_at = CASE WHEN deleted_at IS NULL THEN CURRENT_TIMESTAMP END WHERE id = ?`, id)
		case 4:
			exec(`DELETE FROM docs WHERE id = ?`, id)
		case 5:
			add()
		}
		if i%7 == 0 {
			if err := p.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		}
		check(fmt.Sprint("step ", i))
	}
	exec(`DROP TRIGGER docs_pfts_update`)
	exec(`UPDATE docs SET phase = 'c' WHERE phase = 'a'`)
	if p, err = search.EnsurePartitioned(ctx, database, "docs", "phase"); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")
}

func likeArgs(phase string, words []string) []any {
	args := []any{phase}
	for _, w := range words {
		args = append(args, db.Contains(w))
	}
	return args
}
