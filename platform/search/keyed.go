package search

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// Keyed is the Postgres counterpart of Partitioned: a GIN index of a
// table's search_text whose every pg_trgm trigram is keyed by the row's
// value of one column (a contract's phase), "DangGopY/mon". A search
// within one value then reads that value's posting lists alone: counting
// "móng" among one phase's 14 000 contracts reads the phase's ~800
// candidates from lists of that phase, where pg_trgm's own index, even
// keyed by phase first (btree_gin), decoded the 100 000-entry list of
// "ong" and intersected it with the phase's (docs/query-plans.md).
//
// Postgres keeps the index in the writing transaction, so unlike
// Partitioned no search misses a row (GIN's own pending list, kept short by
// pendingLimit, is read by every search). A trigram is a candidate, not a
// match, so every condition keeps LIKE on the row, and counts stay exact.
type Keyed struct {
	table, column string
	values        []string // every value the column holds; no "/" in any
}

// NewKeyed describes the keyed index of table by column (made by
// KeyedTrigramIndex) whose rows hold one of values.
func NewKeyed(table, column string, values []string) *Keyed {
	for _, v := range values {
		if strings.Contains(v, "/") {
			panic(fmt.Sprintf("search: keyed value %q holds the separator /", v))
		}
	}
	return &Keyed{table: table, column: column, values: values}
}

// KeyedTrigramIndex, run from a module's migration, replaces the trigram
// index ix_<table>_search of table's live rows by ix_<table>_search_keys,
// keyed by column (it does nothing on SQLite). It creates, in the current
// schema, the two functions the index and the queries share:
//
//   - search_keys(value, text): the trigrams of text (pg_trgm's show_trgm:
//     words padded, multibyte trigrams hashed), each prefixed "value/";
//   - search_query_keys(value, word): the keys every text holding word as
//     a substring has. show_trgm pads word's outer ends as ends of words,
//     which a longer word of the text does not have, so these are the
//     trigrams word shares with "q"+word+"q", where both ends run on.
func KeyedTrigramIndex(tx *gorm.DB, table, column string) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	showTrgm, err := trgm(tx, "show_trgm")
	if err != nil {
		return err
	}
	stmts := []string{
		// PL/pgSQL keeps each function's plan for the session; a SQL
		// function's body, which cannot be inlined, was parsed and planned
		// again by every statement that wrote the index or searched it.
		`CREATE OR REPLACE FUNCTION search_keys(value text, t text) RETURNS text[]
			LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
			AS $$ BEGIN RETURN ARRAY(SELECT value || '/' || g FROM unnest(` + showTrgm + `(t)) g); END $$`,
		`CREATE OR REPLACE FUNCTION search_query_keys(value text, word text) RETURNS text[]
			LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
			AS $$ BEGIN RETURN ARRAY(SELECT value || '/' || g FROM unnest(` + showTrgm + `('q' || word || 'q')) g
				WHERE g = ANY (` + showTrgm + `(word))); END $$`,
		fmt.Sprintf(`DROP INDEX IF EXISTS ix_%s_search`, table),
		fmt.Sprintf(`CREATE INDEX ix_%[1]s_search_keys ON %[1]s USING gin (search_keys(%[2]s, search_text)) WITH (`+pendingLimit+`) WHERE deleted_at IS NULL`,
			table, column),
	}
	for _, s := range stmts {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return nil
}

// Match narrows q to rows whose search_text holds word, driven by the
// index: among the rows whose column is value, or any of the values when
// value is "". A word shorter than a trigram is matched by LIKE alone.
func (k *Keyed) Match(q *gorm.DB, value, word string) *gorm.DB {
	like, likeArgs := Likes(k.table, []string{word})
	if !Indexed([]string{word}) {
		return q.Where(like, likeArgs...)
	}
	values := k.values
	if value != "" {
		values = []string{value}
	}
	// The keys come from a sub-select, which Postgres runs at execution: a
	// custom plan that saw them as constants estimated the index's rows
	// from them and always beat the generic plan's estimate, so every
	// execution was planned again (half a millisecond, as long as the
	// search itself on the list's data set) for the same plan.
	keys := fmt.Sprintf("search_keys(%s.%s, %[1]s.search_text) @> (SELECT search_query_keys(?, ?))", k.table, k.column)
	arms := make([]string, len(values))
	var args []any
	for i, v := range values {
		arms[i] = keys
		args = append(args, v, word)
	}
	return q.Where("("+strings.Join(arms, " OR ")+") AND "+like, append(args, likeArgs...)...)
}
