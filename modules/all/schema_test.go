package all_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestSearchIndexesKeepShortPendingLists migrates every module on
// Postgres and checks that each GIN index (the search indexes) keeps its
// pending list short: every search reads that list whole, and at the
// default 4 MB a contract search spent 1.85 of its 3.6 ms on it
// (platform/search, pendingLimit).
func TestSearchIndexesKeepShortPendingLists(t *testing.T) {
	if os.Getenv(testkit.PostgresDSNEnv) == "" {
		t.Skip("Postgres only: " + testkit.PostgresDSNEnv + " is not set")
	}
	opts := kernel.Options{Set: testkit.Isolated(t, "postgres"), Environ: []string{}, LogOutput: io.Discard}
	runCLI(t, opts, "migrate")
	ctx := context.Background()
	k, err := kernel.New(opts)
	require.NoError(t, err)
	defer k.Close(ctx)
	var rows []struct{ Name, Options string }
	require.NoError(t, k.App().DB.Conn(ctx).Raw(`SELECT c.relname AS name, COALESCE(array_to_string(c.reloptions, ','), '') AS options
		FROM pg_class c JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE a.amname = 'gin' AND n.nspname = current_schema() ORDER BY c.relname`).Scan(&rows).Error)
	got := map[string]string{}
	for _, r := range rows {
		got[r.Name] = r.Options
	}
	for _, ix := range []string{"ix_contracts_vocab_search", "ix_purchase_evaluations_search", "ix_suppliers_search",
		"ix_projects_search", "ix_departments_search", "ix_users_search"} {
		assert.Contains(t, got, ix)
	}
	for name, options := range got {
		assert.Equal(t, "gin_pending_list_limit=256", options, name)
	}
}
