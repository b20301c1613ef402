package core

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
)

// Search matches every word of the query as a substring of search_text.
// On Postgres the pg_trgm GIN indexes of the migrations serve it. On SQLite
// a trigram FTS5 table per resource serves it when the SQLite library has
// FTS5 (the build tag sqlite_fts5, which make and the Dockerfile set);
// without FTS5 search falls back to scanning, and says so at start.
//
// The FTS tables are derived data, kept by triggers, so they are managed
// here rather than by numbered migrations: a binary without FTS5 must be
// able to write to a database that an FTS5 binary indexed (it drops the
// triggers), and an FTS5 binary rebuilds an index whose triggers are gone.

// searchTables are the resources whose search can use an index.
var searchTables = []string{"suppliers", "projects", "departments"}

// ensureSearchIndexes prepares the SQLite trigram indexes and reports which
// tables have one.
func ensureSearchIndexes(ctx context.Context, database *db.DB, log *slog.Logger) (map[string]bool, error) {
	indexed := map[string]bool{}
	if database.Dialect() != db.SQLite {
		return indexed, nil
	}
	conn := database.Conn(ctx)
	var fts5 int64
	if err := conn.Raw(`SELECT COUNT(*) FROM pragma_module_list WHERE name = 'fts5'`).Scan(&fts5).Error; err != nil {
		return nil, err
	}
	err := database.InTx(ctx, func(ctx context.Context) error {
		tx := database.Conn(ctx)
		for _, t := range searchTables {
			if fts5 == 0 {
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
	if fts5 == 0 && err == nil {
		log.Warn("SQLite lacks FTS5: master-data search scans its tables; build with -tags sqlite_fts5 (make does)")
	}
	return indexed, err
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

func dropTriggers(tx *gorm.DB, t string) error {
	for _, suffix := range []string{"insert", "delete", "update"} {
		if err := tx.Exec(fmt.Sprintf(`DROP TRIGGER IF EXISTS %s_fts_%s`, t, suffix)).Error; err != nil {
			return err
		}
	}
	return nil
}

// matchWord narrows q to rows whose search_text contains word: through the
// trigram index when the table has one and the word is long enough to hold
// a trigram, else by LIKE.
func matchWord(q *gorm.DB, table string, indexed bool, word string) *gorm.DB {
	if indexed && utf8.RuneCountInString(word) >= 3 {
		// An FTS5 phrase of trigrams matches exactly the substring.
		phrase := `"` + strings.ReplaceAll(word, `"`, `""`) + `"`
		return q.Where(table+".rowid IN (SELECT rowid FROM "+table+"_fts WHERE "+table+"_fts MATCH ?)", phrase)
	}
	return q.Where(table+".search_text LIKE ? "+db.LikeEscape, db.Contains(word))
}
