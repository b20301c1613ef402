// Package testkit starts the whole service in-process for black-box tests:
// a fresh SQLite file per test always, and a fresh Postgres schema per test
// when CONTRACTFLOW_TEST_POSTGRES_DSN is set. With the variable set, a
// Postgres that cannot be reached fails the test; it never skips.
package testkit

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver for schema set-up
)

// PostgresDSNEnv names the variable that adds Postgres runs.
const PostgresDSNEnv = "CONTRACTFLOW_TEST_POSTGRES_DSN"

// Drivers lists the databases the tests run on.
func Drivers() []string {
	if os.Getenv(PostgresDSNEnv) != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// ForEachDriver runs fn as a parallel subtest per database.
func ForEachDriver(t *testing.T, fn func(t *testing.T, driver string)) {
	t.Helper()
	for _, d := range Drivers() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			fn(t, d)
		})
	}
}

// FreshDatabase returns the database.driver and database.dsn settings of a
// new, empty database that is removed when the test ends.
func FreshDatabase(t testing.TB, driver string) map[string]any {
	t.Helper()
	switch driver {
	case "sqlite":
		return map[string]any{"database.driver": "sqlite", "database.dsn": filepath.Join(t.TempDir(), "contractflow.db")}
	case "postgres":
		return map[string]any{"database.driver": "postgres", "database.dsn": FreshSchema(t)}
	}
	t.Fatalf("testkit: unknown driver %q", driver)
	return nil
}

// FreshSchema creates a schema on the test Postgres server and returns a DSN
// whose search_path points at it; the schema is dropped at cleanup.
func FreshSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresDSNEnv)
	if base == "" {
		t.Fatalf("testkit: %s is not set", PostgresDSNEnv)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("testkit: open postgres %s: %v", PostgresDSNEnv, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		_ = admin.Close()
		t.Fatalf("testkit: postgres from %s does not answer: %v", PostgresDSNEnv, err)
	}
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	schema := "t_" + hex.EncodeToString(buf)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		_ = admin.Close()
		t.Fatalf("testkit: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("testkit: drop schema %s: %v", schema, err)
		}
		_ = admin.Close()
	})
	return WithSearchPath(base, schema)
}

// WithSearchPath adds search_path to a URL or key=value Postgres DSN.
func WithSearchPath(dsn, schema string) string { return WithSetting(dsn, "search_path", schema) }

// WithSetting adds a session setting (key=value) to a URL or key=value
// Postgres DSN.
func WithSetting(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			q.Set(key, value)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " " + key + "=" + value
}
