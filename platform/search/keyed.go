package search

import (
	"fmt"

	"gorm.io/gorm"
)

// The keyed trigram index (contracts migrations 13 and 14, replaced by the
// word index in migration 16): a GIN index of a table's search_text whose
// every pg_trgm trigram is keyed by the row's value of one column (a
// contract's phase), "DangGopY/mon". Migrations made before the word index
// still run it on a fresh database.

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

// DropKeyedTrigramIndex, run from a module's migration, drops the keyed
// index of table and the functions it made (it does nothing on SQLite).
func DropKeyedTrigramIndex(tx *gorm.DB, table string) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	for _, s := range []string{
		fmt.Sprintf(`DROP INDEX IF EXISTS ix_%s_search_keys`, table),
		`DROP FUNCTION IF EXISTS search_keys(text, text)`,
		`DROP FUNCTION IF EXISTS search_query_keys(text, text)`,
	} {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return nil
}
