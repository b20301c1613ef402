package search

import (
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
)

// WordIndex is the Postgres index of a table's search_text by whole word, the
// counterpart of Partitioned: <table>_words holds a row (word, value of
// one column, created_at, id) for each space-separated word of each live
// row, its primary key in that order, and <table>_vocab every word any row
// ever held, with a pg_trgm index. A query word (Words splits on spaces, so
// it holds none) is a substring of a text exactly when it is a substring of
// one of the text's words, so the rows holding it are the rows of the
// vocabulary words holding it: the vocabulary's trigram index finds those
// words, and the primary key of <table>_words lists their rows, in a value
// and in the list's order, without reading the table. Counting "móng" among
// one phase's 10 000 contracts reads about 16 index pages where the keyed
// trigram index before it read the heap page of each of ~600 matches.
//
// A trigger keeps both tables in the writing transaction, so counts are
// exact. The table's rows need an id that is a UUID and created_at.
type WordIndex struct {
	table, column string
}

// NewWordIndex describes the word index of table by column made by CreateWordIndex.
func NewWordIndex(table, column string) *WordIndex { return &WordIndex{table: table, column: column} }

// CreateWordIndex, run from a module's migration, creates the word index of
// table by column and fills it from the live rows (it does nothing on
// SQLite). Its trigger rewrites a row's words when a write changes its
// text, its column, created_at or deletion, and adds new words to the
// vocabulary, which never shrinks (a word no row holds any more matches
// no row). Vacuum runs early on the words, so that their pages stay all
// visible and lists read the index alone.
func CreateWordIndex(tx *gorm.DB, table, column string) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	opclass, err := trgm(tx, "gin_trgm_ops")
	if err != nil {
		return err
	}
	words := "string_to_array(%s.search_text, ' ')"
	stmts := []string{
		fmt.Sprintf(`CREATE TABLE %[1]s_words (word TEXT NOT NULL, %[2]s VARCHAR(64) NOT NULL, created_at TIMESTAMP NOT NULL, id UUID NOT NULL,
			PRIMARY KEY (word, %[2]s, created_at, id))
			WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01)`, table, column),
		fmt.Sprintf(`CREATE TABLE %s_vocab (word TEXT PRIMARY KEY)`, table),
		fmt.Sprintf(`CREATE INDEX ix_%[1]s_vocab_search ON %[1]s_vocab USING gin (word %[2]s) WITH (`+pendingLimit+`)`, table, opclass),
		fmt.Sprintf(`CREATE OR REPLACE FUNCTION %[1]s_words_sync() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL THEN
					IF TG_OP = 'UPDATE' AND NEW.deleted_at IS NULL AND NEW.%[2]s = OLD.%[2]s
						AND NEW.search_text = OLD.search_text AND NEW.created_at = OLD.created_at THEN
						RETURN NULL;
					END IF;
					DELETE FROM %[1]s_words WHERE word = ANY (%[3]s) AND %[2]s = OLD.%[2]s AND created_at = OLD.created_at AND id = OLD.id::uuid;
				END IF;
				IF TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL THEN
					INSERT INTO %[1]s_words (word, %[2]s, created_at, id)
						SELECT DISTINCT w, NEW.%[2]s, NEW.created_at, NEW.id::uuid FROM unnest(%[4]s) w WHERE w <> '';
					IF TG_OP = 'INSERT' OR NEW.search_text <> OLD.search_text THEN
						INSERT INTO %[1]s_vocab (word) SELECT DISTINCT w FROM unnest(%[4]s) w WHERE w <> '' ON CONFLICT DO NOTHING;
					END IF;
				END IF;
				RETURN NULL;
			END $$`, table, column, fmt.Sprintf(words, "OLD"), fmt.Sprintf(words, "NEW")),
		fmt.Sprintf(`CREATE TRIGGER %[1]s_words AFTER INSERT OR DELETE OR UPDATE OF %[2]s, search_text, created_at, deleted_at ON %[1]s
			FOR EACH ROW EXECUTE FUNCTION %[1]s_words_sync()`, table, column),
		fmt.Sprintf(`INSERT INTO %[1]s_words (word, %[2]s, created_at, id)
			SELECT DISTINCT w, t.%[2]s, t.created_at, t.id::uuid FROM %[1]s t, unnest(%[3]s) w WHERE t.deleted_at IS NULL AND w <> ''`,
			table, column, fmt.Sprintf(words, "t")),
		fmt.Sprintf(`INSERT INTO %[1]s_vocab (word) SELECT DISTINCT word FROM %[1]s_words`, table),
	}
	for _, s := range stmts {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return nil
}

// holders selects the vocabulary words that hold word.
func (w *WordIndex) holders(word string) (string, []any) {
	return `SELECT word FROM ` + w.table + `_vocab WHERE word LIKE ? ` + db.LikeEscape, []any{db.Contains(word)}
}

// Match narrows q to rows whose search_text holds word: among the rows
// whose column is value, or any when value is "". A word shorter than a
// trigram, which the vocabulary's index cannot find, is matched by LIKE.
func (w *WordIndex) Match(q *gorm.DB, value, word string) *gorm.DB {
	if !Indexed([]string{word}) {
		like, args := Likes(w.table, []string{word})
		return q.Where(like, args...)
	}
	rows, args := w.rows("CAST(id AS VARCHAR)", value, word)
	return q.Where(w.table+".id IN ("+rows+")", args...)
}

// rows selects columns of the words' rows of the rows holding word (in
// value unless ""): a row appears once for each vocabulary word holding
// word that it holds.
func (w *WordIndex) rows(columns, value, word string) (string, []any) {
	holders, args := w.holders(word)
	q := `SELECT ` + columns + ` FROM ` + w.table + `_words WHERE word IN (` + holders + `)`
	if value != "" {
		q += ` AND ` + w.column + ` = ?`
		args = append(args, value)
	}
	return q, args
}

// Matches selects the (id, created_at) of the rows holding every word
// among the rows whose column is value (any when ""): from the index
// alone, so every live row counts once. It reports false when a word is
// shorter than a trigram, which only LIKE on the row (Match) finds.
func (w *WordIndex) Matches(value string, words []string) (string, []any, bool) {
	parts := make([]string, len(words))
	var args []any
	for i, word := range words {
		if !Indexed([]string{word}) {
			return "", nil, false
		}
		q, a := w.rows("id, created_at", value, word)
		parts[i] = q
		args = append(args, a...)
	}
	if len(parts) == 1 {
		return "SELECT DISTINCT id, created_at FROM (" + parts[0] + ") w", args, true
	}
	return strings.Join(parts, " INTERSECT "), args, true // which drops duplicates
}
