package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/search"
)

// TestWordIndexFindsEverySubstring checks the word index against brute
// force: random texts of Vietnamese words, codes with punctuation and
// words of other scripts, inserted, moved between values, edited, deleted
// softly and for good, then searched for random substrings that start and
// end inside words, within one value and in all, both through the list's
// condition (Match) and from the index alone (Matches, whose plan reads no
// document). It runs on Postgres only: SQLite's search by phase is
// Partitioned.
func TestWordIndexFindsEverySubstring(t *testing.T) {
	ctx := context.Background()
	database := openPostgres(t)
	conn := database.Conn(ctx)
	if err := conn.Exec(`CREATE TABLE docs (id VARCHAR(36) PRIMARY KEY, phase VARCHAR(32) NOT NULL, search_text TEXT NOT NULL,
		created_at TIMESTAMP NOT NULL, deleted_at TIMESTAMP NULL)`).Error; err != nil {
		t.Fatal(err)
	}
	phases := []string{"a", "b", "c"}
	pieces := []string{"hop dong", "mong", "coc", "thep", "ong", "hd-0042", "x1", "東京タワー", "москва", "a.b/c", "ống", "50%_x"}
	r := rand.New(rand.NewPCG(3, 4))
	text := func() string {
		var words []string
		for range 1 + r.IntN(4) {
			words = append(words, pieces[r.IntN(len(pieces))])
		}
		t := strings.Join(words, " ")
		if r.IntN(10) == 0 { // glue two pieces into one word
			t = strings.ReplaceAll(t, " ", "")
		}
		return t
	}
	type doc struct {
		id, phase, text string
		live, gone      bool
	}
	var docs []*doc
	insert := func(d *doc) {
		if err := conn.Exec(`INSERT INTO docs VALUES (?, ?, ?, now() - (random() * interval '9 days'), NULL)`, d.id, d.phase, d.text).Error; err != nil {
			t.Fatal(err)
		}
	}
	for range 150 { // rows before the index: its migration fills it
		d := &doc{id: uuid.NewString(), phase: phases[r.IntN(len(phases))], text: text(), live: true}
		docs = append(docs, d)
		insert(d)
	}
	if err := search.CreateWordIndex(conn, "docs", "phase"); err != nil {
		t.Fatal(err)
	}
	for range 150 {
		d := &doc{id: uuid.NewString(), phase: phases[r.IntN(len(phases))], text: text(), live: true}
		docs = append(docs, d)
		insert(d)
	}
	for range 200 { // writes the trigger follows
		d := docs[r.IntN(len(docs))]
		if d.gone {
			continue
		}
		var err error
		switch r.IntN(6) {
		case 0, 1:
			d.phase = phases[r.IntN(len(phases))]
			err = conn.Exec(`UPDATE docs SET phase = ? WHERE id = ?`, d.phase, d.id).Error
		case 2:
			d.text = text()
			err = conn.Exec(`UPDATE docs SET search_text = ? WHERE id = ?`, d.text, d.id).Error
		case 3:
			d.live = !d.live
			err = conn.Exec(`UPDATE docs SET deleted_at = CASE WHEN deleted_at IS NULL THEN now() END WHERE id = ?`, d.id).Error
		case 4:
			err = conn.Exec(`UPDATE docs SET created_at = created_at - interval '1 hour' WHERE id = ?`, d.id).Error
		case 5:
			d.live, d.gone = false, true
			err = conn.Exec(`DELETE FROM docs WHERE id = ?`, d.id).Error
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.Exec(`ANALYZE docs_words`).Error; err != nil {
		t.Fatal(err)
	}
	w := search.NewWordIndex("docs", "phase")
	count := func(phase string, words []string) (viaMatch, viaMatches int64) {
		t.Helper()
		err := database.InTx(ctx, func(ctx context.Context) error {
			tx := database.Conn(ctx)
			if err := tx.Exec(`SET LOCAL enable_seqscan = off`).Error; err != nil {
				return err
			}
			q := tx.Table("docs").Where("deleted_at IS NULL")
			for _, word := range words {
				q = w.Match(q, phase, word)
			}
			if phase != "" {
				q = q.Where("phase = ?", phase)
			}
			if err := q.Count(&viaMatch).Error; err != nil {
				return err
			}
			m, args, ok := w.Matches(phase, words)
			if !ok { // a word shorter than a trigram: Match alone serves it
				viaMatches = viaMatch
				return nil
			}
			count := "SELECT count(*) FROM (" + m + ") m"
			if phase == "b" && words[0] == "ong" {
				var plan []string
				if err := tx.Raw("EXPLAIN "+count, args...).Scan(&plan).Error; err != nil {
					return err
				}
				if p := strings.Join(plan, "\n"); strings.Contains(p, " on docs ") || !strings.Contains(p, "docs_words") {
					return fmt.Errorf("the count reads the documents:\n%s", p)
				}
			}
			return tx.Raw(count, args...).Row().Scan(&viaMatches)
		})
		if err != nil {
			t.Fatal(err)
		}
		return viaMatch, viaMatches
	}
	queries := [][]string{{"ong"}, {"mong"}, {"ng"}, {"hd-0"}, {"d-004"}, {"042"}, {"-00"}, {"京タワ"}, {"タワー"}, {"оск"},
		{"a.b"}, {".b/"}, {"b/c"}, {"ống"}, {"zzz"}, {"50%"}, {"%_x"}, {"ong", "coc"}, {"hop", "dong", "thep"}, {"mong", "ng"}}
	for range 80 { // substrings cut anywhere in a text
		text := []rune(docs[r.IntN(len(docs))].text)
		start := r.IntN(len(text))
		end := min(len(text), start+3+r.IntN(6))
		if w := strings.TrimSpace(string(text[start:end])); w != "" && !strings.Contains(w, " ") {
			queries = append(queries, []string{w})
		}
	}
	for _, words := range queries {
		for _, phase := range append([]string{""}, phases...) {
			var want int64
			for _, d := range docs {
				holds := true
				for _, word := range words {
					holds = holds && strings.Contains(d.text, word)
				}
				if d.live && (phase == "" || d.phase == phase) && holds {
					want++
				}
			}
			if viaMatch, viaMatches := count(phase, words); viaMatch != want || viaMatches != want {
				t.Errorf("phase %q, %q: Match counts %d rows, Matches %d, brute force %d", phase, words, viaMatch, viaMatches, want)
			}
		}
	}
}

// TestWordSearchKeepsItsPlan checks that a word search prepared once is
// planned once: after Postgres's five custom plans it keeps the generic
// one, whatever the words.
func TestWordSearchKeepsItsPlan(t *testing.T) {
	ctx := context.Background()
	database := openPostgres(t)
	conn := database.Conn(ctx)
	for _, s := range []string{
		`CREATE TABLE docs (id VARCHAR(36) PRIMARY KEY, phase VARCHAR(32) NOT NULL, search_text TEXT NOT NULL,
			created_at TIMESTAMP NOT NULL, deleted_at TIMESTAMP NULL)`,
		`INSERT INTO docs SELECT gen_random_uuid(), 'p' || (i % 4), 'hop dong ' || md5(i::text), now(), NULL FROM generate_series(1, 20000) i`,
	} {
		if err := conn.Exec(s).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := search.CreateWordIndex(conn, "docs", "phase"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(`VACUUM ANALYZE docs_words, docs_vocab`).Error; err != nil {
		t.Fatal(err)
	}
	w := search.NewWordIndex("docs", "phase")
	var md5s []string
	if err := conn.Raw(`SELECT substr(md5(i::text), 4, 6) FROM generate_series(1, 9) i`).Scan(&md5s).Error; err != nil {
		t.Fatal(err)
	}
	err := database.InTx(ctx, func(ctx context.Context) error { // one connection, so one prepared statement
		tx := database.Conn(ctx)
		for _, word := range md5s { // rare words: a piece of one row's text each
			m, args, _ := w.Matches("p1", []string{word})
			var n int64
			if err := tx.Raw("SELECT count(*) FROM ("+m+") m", args...).Row().Scan(&n); err != nil {
				return err
			}
		}
		var generic, custom int64
		if err := tx.Raw(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%docs_vocab%'`).
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
