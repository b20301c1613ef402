package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "github.com/mattn/go-sqlite3"    // database/sql driver "sqlite3" (cgo), as the server uses
)

// database is the fresh database of one run: a SQLite file in the run's
// temporary folder, or a new schema on the given Postgres server.
type database struct {
	driver string // "sqlite" or "postgres"
	dsn    string // what the server is given
	path   string // SQLite file
	base   string // Postgres DSN without search_path (to drop the schema)
	schema string // Postgres schema, bench_<random>
}

func sqliteDatabase(dir string) *database {
	p := filepath.Join(dir, "contractflow.db")
	return &database{driver: "sqlite", dsn: p, path: p}
}

// postgresDatabase creates schema bench_<random> and returns a DSN whose
// search_path points at it (as platform/testkit.WithSearchPath does).
func postgresDatabase(ctx context.Context, base string) (*database, error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	buf := make([]byte, 6)
	_, _ = rand.Read(buf)
	schema := "bench_" + hex.EncodeToString(buf)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return nil, fmt.Errorf("create schema on %s: %w", redact(base), err)
	}
	return &database{driver: "postgres", dsn: withSearchPath(base, schema), base: base, schema: schema}, nil
}

// withSearchPath adds search_path to a URL or key=value Postgres DSN.
func withSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " search_path=" + schema
}

// redact hides a password in a URL DSN for messages and the report.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxx")
		}
		return u.String()
	}
	return dsn
}

func (d *database) serverEnv() []string {
	return []string{"CONTRACTFLOW_DATABASE_DRIVER=" + d.driver, "CONTRACTFLOW_DATABASE_DSN=" + d.dsn}
}

// open returns a database/sql handle with up to conns connections. On
// SQLite it uses the server's pragmas and, like the server's writer,
// transactions that begin IMMEDIATE, so concurrent writers queue on the
// file lock instead of failing.
func (d *database) open(conns int) (*sql.DB, error) {
	var db *sql.DB
	var err error
	switch d.driver {
	case "sqlite":
		p := url.Values{}
		p.Set("_busy_timeout", "10000")
		p.Set("_journal_mode", "WAL")
		p.Set("_foreign_keys", "on")
		p.Set("_synchronous", "NORMAL")
		p.Set("_cache_size", "-16000")
		p.Set("_txlock", "immediate")
		db, err = sql.Open("sqlite3", "file:"+d.path+"?"+p.Encode())
	default:
		db, err = sql.Open("pgx", d.dsn)
	}
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return db, nil
}

// ph is the placeholder of the n-th (1-based) parameter.
func (d *database) ph(n int) string {
	if d.driver == "postgres" {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// rebind turns ? placeholders into the driver's.
func (d *database) rebind(q string) string {
	if d.driver != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString(d.ph(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// drop removes the Postgres schema; the SQLite file goes with the folder.
func (d *database) drop() error {
	if d.driver != "postgres" {
		return nil
	}
	admin, err := sql.Open("pgx", d.base)
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = admin.ExecContext(ctx, "DROP SCHEMA "+d.schema+" CASCADE")
	return err
}

// sizeOnDisk reports the database's size: the SQLite file (and WAL), or the
// Postgres schema's relations.
func (d *database) sizeOnDisk(ctx context.Context) int64 {
	switch d.driver {
	case "sqlite":
		var n int64
		for _, suffix := range []string{"", "-wal"} {
			if st, err := os.Stat(d.path + suffix); err == nil {
				n += st.Size()
			}
		}
		return n
	default:
		db, err := sql.Open("pgx", d.dsn)
		if err != nil {
			return 0
		}
		defer db.Close()
		var n int64
		_ = db.QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, d.schema).Scan(&n)
		return n
	}
}
