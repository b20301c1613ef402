package search_test

import (
	"context"
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/search"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestKeyedFindsEverySubstring checks the keyed index against brute force:
// random texts of Vietnamese words, codes with punctuation and words of
// other scripts (whose trigrams pg_trgm hashes), searched for random
// substrings that start and end inside words, within one value and in
// all. The plans are forced onto the index, so a key the query asks for
// that a holding text lacks would show as a missed row. It runs on
// Postgres only: SQLite has no keyed index (Partitioned is its own).
func TestKeyedFindsEverySubstring(t *testing.T) {
	ctx := context.Background()
	database := openPostgres(t)
	conn := database.Conn(ctx)
	if err := conn.Exec(`CREATE TABLE docs (id INT PRIMARY KEY, phase VARCHAR(32) NOT NULL, search_text TEXT NOT NULL, deleted_at TIMESTAMP NULL)`).Error; err != nil {
		t.Fatal(err)
	}
	if err := search.KeyedTrigramIndex(conn, "docs", "phase"); err != nil {
		t.Fatal(err)
	}
	phases := []string{"a", "b", "c"}
	pieces := []string{"hop dong", "mong", "coc", "thep", "ong", "hd-0042", "x1", "東京タワー", "москва", "a.b/c", "ống"}
	r := rand.New(rand.NewPCG(3, 4))
	type doc struct{ phase, text string }
	var docs []doc
	for i := range 300 {
		var words []string
		for range 1 + r.IntN(4) {
			words = append(words, pieces[r.IntN(len(pieces))])
		}
		d := doc{phases[r.IntN(len(phases))], strings.Join(words, " ")}
		if r.IntN(10) == 0 { // glue two pieces into one word
			d.text = strings.ReplaceAll(d.text, " ", "")
		}
		docs = append(docs, d)
		if err := conn.Exec(`INSERT INTO docs VALUES (?, ?, ?, NULL)`, i, d.phase, d.text).Error; err != nil {
			t.Fatal(err)
		}
	}
	k := search.NewKeyed("docs", "phase", phases)
	count := func(phase, word string) int64 {
		t.Helper()
		var n int64
		err := database.InTx(ctx, func(ctx context.Context) error {
			tx := database.Conn(ctx)
			if err := tx.Exec(`SET LOCAL enable_seqscan = off`).Error; err != nil {
				return err
			}
			q := k.Match(tx.Table("docs").Where("deleted_at IS NULL"), phase, word)
			if phase != "" {
				q = q.Where("phase = ?", phase)
			}
			if phase == "b" && word == "ong" {
				var plan []string
				if err := q.Session(&gorm.Session{}).Raw("EXPLAIN " + q.ToSQL(func(tx *gorm.DB) *gorm.DB { return tx.Count(&n) })).Scan(&plan).Error; err != nil {
					return err
				}
				if !strings.Contains(strings.Join(plan, "\n"), "ix_docs_search_keys") {
					return fmt.Errorf("the count does not use the keyed index:\n%s", strings.Join(plan, "\n"))
				}
			}
			return q.Count(&n).Error
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	words := []string{"ong", "mong", "ng", "hd-0", "d-004", "042", "-00", "京タワ", "タワー", "оск", "a.b", ".b/", "b/c", "ống", "zzz"}
	for range 80 { // substrings cut anywhere in a text
		text := []rune(docs[r.IntN(len(docs))].text)
		start := r.IntN(len(text))
		end := min(len(text), start+3+r.IntN(6))
		if w := strings.TrimSpace(string(text[start:end])); w != "" && !strings.Contains(w, " ") {
			words = append(words, w)
		}
	}
	for _, w := range words {
		for _, phase := range append([]string{""}, phases...) {
			var want int64
			for _, d := range docs {
				if (phase == "" || d.phase == phase) && strings.Contains(d.text, w) {
					want++
				}
			}
			if got := count(phase, w); got != want {
				t.Errorf("phase %q, %q: %d rows, brute force finds %d", phase, w, got, want)
			}
		}
	}
}

// TestKeyedSearchKeepsItsPlan checks that a keyed search prepared once is
// planned once: after Postgres's five custom plans it keeps the generic
// one, whatever the words.
func TestKeyedSearchKeepsItsPlan(t *testing.T) {
	ctx := context.Background()
	database := openPostgres(t)
	conn := database.Conn(ctx)
	for _, s := range []string{
		`CREATE TABLE docs (id INT PRIMARY KEY, phase VARCHAR(32) NOT NULL, search_text TEXT NOT NULL, deleted_at TIMESTAMP NULL)`,
		`INSERT INTO docs SELECT i, 'p' || (i % 4), 'hd ' || md5(i::text), NULL FROM generate_series(1, 20000) i`,
	} {
		if err := conn.Exec(s).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := search.KeyedTrigramIndex(conn, "docs", "phase"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(`ANALYZE docs`).Error; err != nil {
		t.Fatal(err)
	}
	k := search.NewKeyed("docs", "phase", []string{"p0", "p1", "p2", "p3"})
	err := database.InTx(ctx, func(ctx context.Context) error { // one connection, so one prepared statement
		tx := database.Conn(ctx)
		for i := 1; i <= 9; i++ { // rare words: a piece of one row's text each
			w := fmt.Sprintf("%x", md5.Sum([]byte(fmt.Sprint(4*i+1))))[3:9]
			var n int64
			if err := k.Match(tx.Table("docs").Where("deleted_at IS NULL AND phase = ?", "p1"), "p1", w).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("%q: not found", w)
			}
		}
		var generic, custom int64
		if err := tx.Raw(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%search_query_keys%'`).
			Row().Scan(&generic, &custom); err != nil {
			return err
		}
		if generic == 0 {
			return fmt.Errorf("9 searches: %d generic plans, %d custom", generic, custom)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ShortPendingLists gives an index made before the limit existed the
// limit the search indexes are now made with.
func TestShortPendingLists(t *testing.T) {
	conn := openPostgres(t).Conn(context.Background())
	options := func(ix string) string {
		var s string
		if err := conn.Raw(`SELECT COALESCE(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = ?::regclass`, ix).Scan(&s).Error; err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, s := range []string{
		`CREATE TABLE old (id INT PRIMARY KEY, search_text TEXT NOT NULL, deleted_at TIMESTAMP NULL)`,
		`CREATE INDEX ix_old_search ON old USING gin (to_tsvector('simple', search_text))`,
		`CREATE TABLE docs (id INT PRIMARY KEY, search_text TEXT NOT NULL, deleted_at TIMESTAMP NULL)`,
	} {
		if err := conn.Exec(s).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := search.TrigramIndex(conn, "docs"); err != nil {
		t.Fatal(err)
	}
	if got := options("ix_docs_search"); got != "gin_pending_list_limit=256" {
		t.Errorf("a new search index has options %q", got)
	}
	if got := options("ix_old_search"); got != "" {
		t.Fatalf("the old index has options %q before", got)
	}
	if err := search.ShortPendingLists(conn, "ix_old_search"); err != nil {
		t.Fatal(err)
	}
	if got := options("ix_old_search"); got != "gin_pending_list_limit=256" {
		t.Errorf("the old index has options %q after ShortPendingLists", got)
	}
}

// openPostgres opens a fresh Postgres schema for a test of Postgres's
// indexes, skipping it where no Postgres is configured.
func openPostgres(t *testing.T) *db.DB {
	t.Helper()
	if os.Getenv(testkit.PostgresDSNEnv) == "" {
		t.Skip("Postgres only: " + testkit.PostgresDSNEnv + " is not set")
	}
	database, err := db.Open(db.Config{Driver: "postgres", DSN: testkit.FreshSchema(t), MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close() })
	return database
}
