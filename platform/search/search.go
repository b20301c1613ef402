// Package search is substring search over a stored, folded search_text
// column: every word of the query must occur in it. On Postgres pg_trgm GIN
// indexes serve it (TrigramIndex, from a migration; Keyed, trigrams keyed
// by a column's value, for a table searched within one value). On SQLite
// a trigram FTS5 table per resource serves it when the SQLite library has
// FTS5 (the build tag sqlite_fts5, which make and the Dockerfile set);
// without FTS5 search falls back to scanning, and says so at start.
//
// The FTS tables are derived data, kept by triggers, so they are managed
// here rather than by numbered migrations: a binary without FTS5 must be
// able to write to a database that an FTS5 binary indexed (it drops the
// triggers), and an FTS5 binary rebuilds an index whose triggers are gone.
package search

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
)

// EnsureIndexes prepares the SQLite trigram indexes of tables, each of
// which has a search_text column, and reports which tables have one.
func EnsureIndexes(ctx context.Context, database *db.DB, log *slog.Logger, tables ...string) (map[string]bool, error) {
	indexed := map[string]bool{}
	if database.Dialect() != db.SQLite {
		return indexed, nil
	}
	fts5, err := hasFTS5(database.Conn(ctx))
	if err != nil {
		return nil, err
	}
	err = database.InTx(ctx, func(ctx context.Context) error {
		tx := database.Conn(ctx)
		for _, t := range tables {
			if !fts5 {
				if err := dropTriggers(tx, t); err != nil {
					return err
				}
				continue
			}
			if err := ensureIndex(tx, t); err != nil {
				return fmt.Errorf("search index of %s: %w", t, err)
			}
			indexed[t] = true
		}
		return nil
	})
	if !fts5 && err == nil {
		log.Warn("SQLite lacks FTS5: search scans its tables; build with -tags sqlite_fts5 (make does)", "tables", tables)
	}
	return indexed, err
}

// hasFTS5 reports whether the SQLite library has FTS5 (build tag
// sqlite_fts5).
func hasFTS5(conn *gorm.DB) (bool, error) {
	var n int64
	err := conn.Raw(`SELECT COUNT(*) FROM pragma_module_list WHERE name = 'fts5'`).Scan(&n).Error
	return n > 0, err
}

func ensureIndex(tx *gorm.DB, t string) error {
	var triggers int64
	if err := tx.Raw(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE ?`, t+"_fts_%").Scan(&triggers).Error; err != nil {
		return err
	}
	if triggers == 3 {
		return nil
	}
	stmts := []string{
		fmt.Sprintf(`CREATE VIRTUAL TABLE IF NOT EXISTS %[1]s_fts USING fts5(search_text, content='%[1]s', content_rowid='rowid', tokenize='trigram')`, t),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %[1]s_fts_insert AFTER INSERT ON %[1]s BEGIN
			INSERT INTO %[1]s_fts (rowid, search_text) VALUES (new.rowid, new.search_text); END`, t),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %[1]s_fts_delete AFTER DELETE ON %[1]s BEGIN
			INSERT INTO %[1]s_fts (%[1]s_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text); END`, t),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %[1]s_fts_update AFTER UPDATE OF search_text ON %[1]s BEGIN
			INSERT INTO %[1]s_fts (%[1]s_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
			INSERT INTO %[1]s_fts (rowid, search_text) VALUES (new.rowid, new.search_text); END`, t),
		// Whatever happened while the triggers were missing, start over.
		fmt.Sprintf(`INSERT INTO %[1]s_fts (%[1]s_fts) VALUES ('rebuild')`, t),
	}
	for _, s := range stmts {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return nil
}

// DropIndexes removes the trigram indexes of tables that no longer keep
// one (their triggers, and the table where FTS5 can drop it).
func DropIndexes(ctx context.Context, database *db.DB, tables ...string) error {
	if database.Dialect() != db.SQLite {
		return nil
	}
	return database.InTx(ctx, func(ctx context.Context) error {
		tx := database.Conn(ctx)
		fts5, err := hasFTS5(tx)
		if err != nil {
			return err
		}
		for _, t := range tables {
			if err := dropTriggers(tx, t); err != nil {
				return err
			}
			if !fts5 {
				continue
			}
			if err := tx.Exec(`DROP TABLE IF EXISTS ` + t + `_fts`).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

func dropTriggers(tx *gorm.DB, t string) error {
	for _, suffix := range []string{"insert", "delete", "update"} {
		if err := tx.Exec(fmt.Sprintf(`DROP TRIGGER IF EXISTS %s_fts_%s`, t, suffix)).Error; err != nil {
			return err
		}
	}
	return nil
}

// Match narrows q to rows whose search_text contains word: through the
// trigram index when the table has one and the word is long enough to hold
// a trigram, else by LIKE.
func Match(q *gorm.DB, table string, indexed bool, word string) *gorm.DB {
	if indexed && utf8.RuneCountInString(word) >= 3 {
		// An FTS5 phrase of trigrams matches exactly the substring.
		phrase := `"` + strings.ReplaceAll(word, `"`, `""`) + `"`
		return q.Where(table+".rowid IN (SELECT rowid FROM "+table+"_fts WHERE "+table+"_fts MATCH ?)", phrase)
	}
	return q.Where(table+".search_text LIKE ? "+db.LikeEscape, db.Contains(word))
}

// Indexed reports whether the trigram index can serve a search for words:
// at least one of them holds a trigram (shorter ones are matched by LIKE).
func Indexed(words []string) bool {
	for _, w := range words {
		if utf8.RuneCountInString(w) >= 3 {
			return true
		}
	}
	return false
}

// Fold is the form search compares: lower case, without Vietnamese tone and
// vowel marks (đ → d), so "cong ty" finds "Công ty". Both engines compare
// the folded text byte for byte, so case and marks behave the same on each.
func Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if unicode.Is(unicode.Mn, r) { // a combining mark of decomposed text
			continue
		}
		if base, ok := foldMap[r]; ok {
			r = base
		}
		b.WriteRune(r)
	}
	return b.String()
}

var foldMap = func() map[rune]rune {
	groups := map[rune]string{
		'a': "àáảãạăằắẳẵặâầấẩẫậ",
		'e': "èéẻẽẹêềếểễệ",
		'i': "ìíỉĩị",
		'o': "òóỏõọôồốổỗộơờớởỡợ",
		'u': "ùúủũụưừứửữự",
		'y': "ỳýỷỹỵ",
		'd': "đ",
	}
	m := map[rune]rune{}
	for base, marked := range groups {
		for _, r := range marked {
			m[r] = base
		}
	}
	return m
}()

// Text is the folded text a record's search matches: its non-empty parts.
func Text(parts ...string) string {
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	return Fold(strings.Join(nonEmpty, " "))
}

// Words splits a query into folded words; a record matches when its text
// contains every word.
func Words(query string) []string { return strings.Fields(Fold(query)) }

// TrigramIndex, run from a module's migration, makes LIKE '%word%' on
// table.search_text index-backed on Postgres (it does nothing on SQLite).
// The pg_trgm extension is database-wide: it is created once, in schema
// public, under a lock so that schemas migrating side by side do not race,
// and the index names the operator class by the schema the extension lives
// in.
func TrigramIndex(tx *gorm.DB, table string) error {
	return trigramIndex(tx, table, " WHERE deleted_at IS NULL")
}

// TrigramIndexAll is TrigramIndex for a table without soft delete (users):
// the index covers every row.
func TrigramIndexAll(tx *gorm.DB, table string) error {
	return trigramIndex(tx, table, "")
}

// TrigramIndexBy is TrigramIndex keyed by column first (btree_gin's
// equality on a GIN index): a search restricted to one value of column
// (a phase) reads from the index only the matches with that value, where
// the plain index hands every match of the table to the heap, which then
// drops those of other values. A query without column uses it as it
// would the plain index (a GIN index serves any subset of its columns
// alike), so the index replaces the plain one of a migration before.
func TrigramIndexBy(tx *gorm.DB, table, column string) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	if _, err := extension(tx, "btree_gin"); err != nil {
		return err
	}
	if err := tx.Exec(fmt.Sprintf(`DROP INDEX IF EXISTS ix_%s_search`, table)).Error; err != nil {
		return err
	}
	return trigramIndex(tx, table, " WHERE deleted_at IS NULL", column)
}

// trigramIndex creates ix_<table>_search over the columns before
// search_text and search_text.
func trigramIndex(tx *gorm.DB, table, where string, before ...string) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	opclass, err := trgm(tx, "gin_trgm_ops")
	if err != nil {
		return err
	}
	keys := strings.Join(append(before, "search_text "+opclass), ", ")
	return tx.Exec(fmt.Sprintf(`CREATE INDEX ix_%s_search ON %[1]s USING gin (%s) WITH (`+pendingLimit+`)%s`, table, keys, where)).Error
}

// pendingLimit is the storage parameter of every search index. A GIN index
// files a written row's keys in a pending list that every search reads
// whole, until the list passes gin_pending_list_limit (4 MB by default) or
// a vacuum merges it into the tree: after the demo load a contract search
// read 366 pending pages, 1.85 of its 3.6 ms. At 256 kB a search reads at
// most 32 such pages, and the write that fills the list merges it.
// (fastupdate = off, no list at all, cost a phase change some 20 % more.)
const pendingLimit = `gin_pending_list_limit = 256`

// ShortPendingLists, run from a module's migration, gives indexes made
// before pendingLimit that limit (it does nothing on SQLite).
func ShortPendingLists(tx *gorm.DB, indexes ...string) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	for _, ix := range indexes {
		if err := tx.Exec(`ALTER INDEX ` + ix + ` SET (` + pendingLimit + `)`).Error; err != nil {
			return err
		}
	}
	return nil
}

// trgm names an object of pg_trgm (creating the extension if need be) by
// the schema it lives in, so that indexes and functions do not depend on
// the search_path.
func trgm(tx *gorm.DB, object string) (string, error) {
	schema, err := extension(tx, "pg_trgm")
	if err != nil {
		return "", err
	}
	return `"` + strings.ReplaceAll(schema, `"`, `""`) + `".` + object, nil
}

// extension creates the extension name (contrib, trusted: a database owner
// may create it) unless it exists and returns the schema it lives in.
func extension(tx *gorm.DB, name string) (string, error) {
	schema, err := extensionSchema(tx, name)
	if err != nil || schema != "" {
		return schema, err
	}
	if err := tx.Exec(`SELECT pg_advisory_xact_lock(7312, hashtext(?))`, name).Error; err != nil {
		return "", err
	}
	if err := tx.Exec(`CREATE EXTENSION IF NOT EXISTS ` + name + ` WITH SCHEMA public`).Error; err != nil {
		return "", fmt.Errorf("create extension %s, which search needs (a database owner or superuser can run CREATE EXTENSION %[1]s WITH SCHEMA public once): %w", name, err)
	}
	return extensionSchema(tx, name)
}

func extensionSchema(tx *gorm.DB, name string) (string, error) {
	var schema string
	err := tx.Raw(`SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = ?`, name).Scan(&schema).Error
	return schema, err
}

// Phrase is the FTS5 query matching text as a substring: an exact phrase of
// its trigrams.
func Phrase(text string) string { return `"` + strings.ReplaceAll(text, `"`, `""`) + `"` }
