package search_test

import (
	"context"
	"os"
	"testing"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/search"
	"github.com/contractflow/contractflow/platform/testkit"
)

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
