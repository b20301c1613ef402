// Package db opens the service's database and carries transactions through
// context.Context, so a store joins its caller's transaction without knowing
// it. SQLite (the default) gets one writer connection, which makes writers
// queue instead of failing with "database is locked", plus a pool of readers;
// Postgres gets an ordinary pool.
package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
	"gorm.io/plugin/dbresolver"

	"github.com/contractflow/contractflow/platform/paging"
)

// Dialect names the SQL engine behind a DB.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Config selects and tunes the database.
type Config struct {
	Driver       string
	DSN          string
	MaxOpenConns int
	Logger       *slog.Logger
}

// DB is the service's database handle. There is no global one: the kernel
// opens it and hands it to modules.
type DB struct {
	gorm     *gorm.DB
	dialect  Dialect
	resolver *dbresolver.DBResolver // SQLite readers; nil on Postgres
	ckpt     *checkpointer          // SQLite files; nil elsewhere
	group    *groupCommitter        // SQLite; nil on Postgres
	reads    *sql.DB                // the pool Query reads from: SQLite's readers, or Postgres's pool
}

// Open connects and verifies the connection.
func Open(cfg Config) (*DB, error) {
	gcfg := &gorm.Config{
		Logger:         newLogger(cfg.Logger),
		NowFunc:        func() time.Time { return time.Now().UTC() },
		TranslateError: true,
	}
	var (
		g        *gorm.DB
		resolver *dbresolver.DBResolver
		ckpt     *checkpointer
		err      error
		d        Dialect
	)
	switch cfg.Driver {
	case "sqlite":
		d = SQLite
		g, resolver, ckpt, err = openSQLite(cfg, gcfg)
	case "postgres":
		d = Postgres
		g, err = openPostgres(cfg.DSN, gcfg)
		if err == nil {
			err = sizePool(g, cfg.MaxOpenConns, postgresPool)
		}
	default:
		return nil, fmt.Errorf("unknown database driver %q", cfg.Driver)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", cfg.Driver, err)
	}
	db := &DB{gorm: g, dialect: d, resolver: resolver, ckpt: ckpt}
	if db.reads, err = g.DB(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if d == SQLite {
		db.group = startGroupCommitter(g)
		_ = resolver.Call(func(p gorm.ConnPool) error {
			if r, ok := p.(*sql.DB); ok && r != db.reads {
				db.reads = r
			}
			return nil
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.Ping(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", cfg.Driver, err)
	}
	return db, nil
}

// openSQLite opens the file three ways: a single writer connection whose
// transactions begin IMMEDIATE (they take the write lock up front, so two
// writers never deadlock upgrading a read lock), a pool of readers, and the
// checkpointer's connection (checkpoint.go). dbresolver routes queries to
// the readers and writes and transactions to the writer.
func openSQLite(cfg Config, gcfg *gorm.Config) (*gorm.DB, *dbresolver.DBResolver, *checkpointer, error) {
	path := strings.TrimPrefix(cfg.DSN, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, nil, nil, fmt.Errorf("create database folder: %w", err)
		}
	}
	// Pragmas are per connection; the driver applies these on every new one.
	// busy_timeout comes first so the others never fail on a busy file.
	params := url.Values{}
	params.Set("_busy_timeout", "10000")
	params.Set("_journal_mode", "WAL")
	params.Set("_foreign_keys", "on")
	params.Set("_synchronous", "NORMAL")
	// Each connection keeps its statements prepared: a request's queries are
	// the same few texts every time, and preparing them cost as much as
	// running them (the driver takes a statement out of the cache while it
	// runs, so one text used twice at once is prepared twice, never shared).
	params.Set("_stmt_cache_size", strconv.Itoa(stmtCacheSize))
	params.Set("_cache_size", strconv.Itoa(-readerCacheKiB))
	writerParams := url.Values{}
	for k, v := range params {
		writerParams[k] = v
	}
	writerParams.Set("_txlock", "immediate")
	writerParams.Set("_cache_size", strconv.Itoa(-writerCacheKiB))

	g, err := gorm.Open(sqlite.New(sqlite.Config{DriverName: sqliteDriver(true), DSN: "file:" + path + "?" + writerParams.Encode()}), gcfg)
	if err != nil {
		return nil, nil, nil, err
	}
	resolver := dbresolver.Register(dbresolver.Config{
		Replicas: []gorm.Dialector{sqlite.New(sqlite.Config{DriverName: sqliteDriver(false), DSN: "file:" + path + "?" + params.Encode()})},
	}).SetMaxOpenConns(cfg.MaxOpenConns).SetMaxIdleConns(cfg.MaxOpenConns).
		SetConnMaxIdleTime(sqlitePool.maxIdleTime).SetConnMaxLifetime(sqlitePool.maxLifetime)
	if err := g.Use(resolver); err != nil {
		return nil, nil, nil, err
	}
	// Without Sources the resolver writes through g's own pool: cap it at one
	// connection, after the resolver's setters above sized every pool as a reader.
	if err := sizePool(g, 1, sqlitePool); err != nil {
		return nil, nil, nil, err
	}
	if path == ":memory:" {
		return g, resolver, nil, nil
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	ckpt, err := startCheckpointer("file:"+path+"?"+params.Encode(), log)
	return g, resolver, ckpt, err
}

// Statement cache and page cache of each SQLite connection. The page cache
// is allocated as pages are read, so these are ceilings, reached under load:
// the writer's 8 MiB holds the indexes every write walks; the readers are
// many (database.maxOpenConns) and share the OS's cache of the file behind
// their 2 MiB each, so 20 readers stay under 48 MiB in all (4 MiB each took
// 84 MiB; 16 MiB each took the server to ~600 MiB under the benchmark's load).
const (
	stmtCacheSize  = 128
	writerCacheKiB = 8 << 10
	readerCacheKiB = 2 << 10
)

// poolLifetimes say how long a pooled connection lives.
type poolLifetimes struct{ maxIdleTime, maxLifetime time.Duration }

var (
	// A SQLite connection costs ~0.7 ms to open and starts with a cold page
	// and statement cache; nothing on the other side wants it recycled, so
	// only a connection unused for half an hour is closed (giving its
	// memory back after a burst).
	sqlitePool = poolLifetimes{maxIdleTime: 30 * time.Minute}
	// A Postgres connection is a server process: recycling it every hour
	// lets a failover or a pooler rebalance, and ten idle minutes give a
	// quiet node's backends back to the server.
	postgresPool = poolLifetimes{maxIdleTime: 10 * time.Minute, maxLifetime: time.Hour}
)

// sizePool caps g's pool at n connections and keeps all n when idle:
// database/sql keeps 2 idle by default, so under load a pool of 20 closed and
// reopened connections on almost every request.
func sizePool(g *gorm.DB, n int, life poolLifetimes) error {
	sqlDB, err := g.DB()
	if err != nil {
		return err
	}
	sqlDB.SetMaxOpenConns(n)
	sqlDB.SetMaxIdleConns(n)
	sqlDB.SetConnMaxIdleTime(life.maxIdleTime)
	sqlDB.SetConnMaxLifetime(life.maxLifetime)
	return nil
}

// Dialect reports the SQL engine.
func (db *DB) Dialect() Dialect { return db.dialect }

// AnalyzeAfterLoad readies the database after a bulk load: on Postgres,
// VACUUM (ANALYZE) of every table of the current schema, now rather than
// whenever autovacuum gets to it (never, where it is off). The load's
// counter updates leave dead row versions behind (183 000 in
// contract_totals after 100 000 contracts) and the planner has no
// statistics. SQLite has nothing to vacuum, and the service plans its
// statements there without statistics on purpose (docs/decisions.md).
func (db *DB) AnalyzeAfterLoad(ctx context.Context) error {
	if db.dialect != Postgres {
		return nil
	}
	var tables []string
	if err := db.gorm.WithContext(ctx).Raw(`SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`).
		Scan(&tables).Error; err != nil || len(tables) == 0 {
		return err
	}
	return db.gorm.WithContext(ctx).Exec(`VACUUM (ANALYZE) ` + strings.Join(tables, ", ")).Error
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	sqlDB, err := db.gorm.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// Close releases every connection.
func (db *DB) Close() error {
	if db.group != nil {
		db.group.stop()
	}
	var errs []error
	if sqlDB, err := db.gorm.DB(); err == nil {
		if db.reads != nil && db.reads != sqlDB {
			errs = append(errs, db.reads.Close()) // SQLite's readers
		}
		errs = append(errs, sqlDB.Close())
	}
	if db.ckpt != nil {
		errs = append(errs, db.ckpt.stop())
	}
	return errors.Join(errs...)
}

type txKey struct{}

type txState struct {
	tx          *gorm.DB
	pg          *pgTx // the Postgres transaction under tx; nil on SQLite
	speculative bool  // checks may be deferred to a later round trip (Speculative)
	afterCommit []func()
}

// Conn returns the transaction riding in ctx, or the database bound to ctx.
// Only store code calls it.
func (db *DB) Conn(ctx context.Context) *gorm.DB {
	if st, ok := ctx.Value(txKey{}).(*txState); ok && st != nil {
		return st.tx
	}
	return db.gorm.WithContext(ctx)
}

// Query runs a read written out in SQL, with $1…$n placeholders (both
// engines read them), in the transaction riding in ctx or else on a reader,
// below GORM: for the hottest reads, GORM's building of a raw statement
// (it copies the text byte by byte) and its callbacks cost more than the
// statement. The caller closes the rows.
func (db *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st, ok := ctx.Value(txKey{}).(*txState); ok && st != nil {
		return st.tx.Statement.ConnPool.QueryContext(ctx, query, args...)
	}
	return db.reads.QueryContext(ctx, query, args...)
}

// Rows is what a Read's Scan reads: database/sql's rows, or pgx's.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Read is one statement of Batch and what to do with its rows.
type Read struct {
	SQL  string // $1…$n placeholders
	Args []any
	Scan func(Rows) error // reads the rows (closing them is Batch's)
}

// Batch runs reads that do not depend on each other, in order, in the
// transaction riding in ctx or else as Query does. On Postgres they go out
// in one round trip (with the transaction's BEGIN when they are its first
// statements); each still sees what committed before it started, so a read
// after a locking read sees every write the lock waited for. On SQLite
// they run one after the other.
func (db *DB) Batch(ctx context.Context, reads ...Read) error {
	st, _ := ctx.Value(txKey{}).(*txState)
	switch {
	case st != nil && st.pg != nil:
		return st.pg.reads(ctx, reads)
	case st == nil && db.dialect == Postgres:
		conn, err := db.reads.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		return (&pgTx{conn: conn, begun: true}).reads(ctx, reads)
	}
	for _, r := range reads {
		if err := db.read(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// ReadGenericPlan runs r as Batch does, and on Postgres outside a
// transaction with the one plan Postgres keeps for r's statement whatever
// its arguments (a generic plan), in the same round trip. Postgres plans a
// prepared statement anew on every execution when its estimates depend on
// the arguments (a LIKE pattern, a LIMIT), which for a statement reaching
// every table by index, whatever the arguments, costs as much as running
// it: use it for such statements only, whose plan the arguments cannot
// make worse. The setting is local to the round trip's implicit
// transaction, so it ends with it.
func (db *DB) ReadGenericPlan(ctx context.Context, r Read) error {
	if st, _ := ctx.Value(txKey{}).(*txState); st != nil || db.dialect != Postgres {
		return db.Batch(ctx, r)
	}
	return db.Batch(ctx, genericPlan, r)
}

var genericPlan = Read{SQL: `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`, Scan: func(Rows) error { return nil }}

func (db *DB) read(ctx context.Context, r Read) error {
	rows, err := db.Query(ctx, r.SQL, r.Args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := r.Scan(rows); err != nil {
		return err
	}
	return rows.Close()
}

// ExecAtCommit runs a write whose result the caller does not need (a
// notification's rows) with the commit of the transaction in ctx: on
// Postgres in COMMIT's round trip, so a failure fails the commit and
// rolls the whole transaction back; on SQLite, and outside a transaction,
// at once. Reads later in the transaction do not see it on Postgres.
func (db *DB) ExecAtCommit(ctx context.Context, query string, args ...any) error {
	return db.execQueued(ctx, (*pgTx).execLater, query, args)
}

// ExecWithNext runs a write whose result the caller does not need, in the
// transaction in ctx, before whatever the transaction sends next: on
// Postgres in the next statement's round trip (or COMMIT's), so its
// failure is that statement's; on SQLite, and outside a transaction, at
// once. Unlike ExecAtCommit it keeps its place among the transaction's
// statements, and so the order in which they take their locks.
func (db *DB) ExecWithNext(ctx context.Context, query string, args ...any) error {
	return db.execQueued(ctx, (*pgTx).execNext, query, args)
}

// execQueued hands a write to queue on a Postgres transaction, or runs it.
func (db *DB) execQueued(ctx context.Context, queue func(*pgTx, string, []any), query string, args []any) error {
	if st, ok := ctx.Value(txKey{}).(*txState); ok && st != nil && st.pg != nil {
		queue(st.pg, query, args)
		return nil
	}
	_, err := db.Conn(ctx).Statement.ConnPool.ExecContext(ctx, query, args...)
	return err
}

// InTx runs fn in a transaction that travels in the ctx given to fn. When ctx
// already carries one, fn joins it. Functions registered with AfterCommit run
// once the outermost transaction has committed. On SQLite fn may share its
// commit with others (group.go): it runs on the writer's goroutine, and its
// ctx is no longer cancelled with the caller's; when the caller's is, fn's
// writes are rolled back.
func (db *DB) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if st, ok := ctx.Value(txKey{}).(*txState); ok && st != nil {
		return fn(ctx)
	}
	if db.group != nil {
		return db.group.do(ctx, fn)
	}
	return db.inPostgresTx(ctx, fn)
}

// InTransaction reports whether ctx carries a transaction.
func InTransaction(ctx context.Context) bool {
	st, ok := ctx.Value(txKey{}).(*txState)
	return ok && st != nil
}

// WithoutTx returns ctx detached from its transaction, for work that runs
// after the transaction has ended.
func WithoutTx(ctx context.Context) context.Context {
	return context.WithValue(ctx, txKey{}, (*txState)(nil))
}

// AfterCommit runs f after the transaction in ctx commits, or at once when
// ctx carries none. A rolled-back transaction drops f.
func AfterCommit(ctx context.Context, f func()) {
	if st, ok := ctx.Value(txKey{}).(*txState); ok && st != nil {
		st.afterCommit = append(st.afterCommit, f)
		return
	}
	f()
}

// IsUniqueViolation reports whether err is a unique-constraint failure on
// either engine.
func IsUniqueViolation(err error) bool {
	return errors.Is(err, gorm.ErrDuplicatedKey)
}

// IsNotFound reports whether err means no row matched.
func IsNotFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }

func newLogger(l *slog.Logger) logger.Interface {
	if l == nil {
		return logger.Discard
	}
	return quietLogger{Interface: logger.NewSlogLogger(l, logger.Config{
		SlowThreshold:             slowQuery,
		LogLevel:                  logger.Warn,
		IgnoreRecordNotFoundError: true,
		ParameterizedQueries:      true,
	})}
}

// slowQuery is the time past which a statement is logged as slow.
const slowQuery = 500 * time.Millisecond

// quietLogger asks GORM for a statement's text only when it logs it (an
// error, or slower than slowQuery, or every statement once LogMode is Info):
// GORM's slog logger formats every statement first and then drops it below
// warning level, which cost 2 % of a contract detail's CPU.
type quietLogger struct {
	logger.Interface
	all bool // LogMode(Info) or louder: every statement is logged
}

func (l quietLogger) LogMode(level logger.LogLevel) logger.Interface {
	return quietLogger{l.Interface.LogMode(level), level >= logger.Info}
}

func (l quietLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if !l.all && (err == nil || errors.Is(err, gorm.ErrRecordNotFound)) && time.Since(begin) <= slowQuery {
		return
	}
	l.Interface.Trace(ctx, begin, fc, err)
}

// Page applies a list request's order and window to q. Sort columns come
// from a paging.Spec whitelist, never from the client. The id breaks ties,
// in the direction of the last key, so an index on (key, id) serves the
// page either way; it is qualified like the last key ("contracts.id").
func Page(q *gorm.DB, req paging.Request) *gorm.DB {
	tie := clause.OrderByColumn{Column: clause.Column{Name: "id"}}
	for _, o := range req.Sort {
		q = q.Order(clause.OrderByColumn{Column: clause.Column{Name: o.Column, Raw: strings.Contains(o.Column, ".")}, Desc: o.Desc})
		tie.Desc = o.Desc
		if table, _, ok := strings.Cut(o.Column, "."); ok {
			tie.Column = clause.Column{Name: table + ".id", Raw: true}
		}
	}
	return q.Order(tie).Limit(req.PageSize).Offset(req.Offset())
}

// PageOf reads one page of q's rows and how many rows q has in all. The
// page comes first; the count runs only when the page does not settle it
// (a page shorter than pageSize after offset o means o+len rows in all).
func PageOf[T any](q *gorm.DB, req paging.Request) ([]T, int64, error) {
	return PageCounted[T](q, req, func() (int64, error) {
		var n int64
		return n, q.Count(&n).Error
	})
}

// PageCounted is PageOf with the count of q's rows from count (kept
// counters, where counting the rows would read them all).
func PageCounted[T any](q *gorm.DB, req paging.Request, count func() (int64, error)) ([]T, int64, error) {
	rows := []T{}
	if err := Page(q.Session(&gorm.Session{}), req).Find(&rows).Error; err != nil {
		return nil, 0, err
	}
	total, err := Total(req, len(rows), count)
	if err != nil {
		return nil, 0, err
	}
	return rows, total, nil
}

// Total is how many rows a list has whose page req held n of them: a page
// shorter than the page size after offset o means o+n rows in all, else
// count says.
func Total(req paging.Request, n int, count func() (int64, error)) (int64, error) {
	if n == req.PageSize || (n == 0 && req.Offset() > 0) {
		return count()
	}
	return int64(req.Offset() + n), nil
}

// Contains returns a LIKE pattern matching text anywhere, with LIKE's own
// wildcards escaped; use it with LikeEscape.
func Contains(text string) string { return "%" + likeEscaper.Replace(text) + "%" }

// likeEscaper is built once: a Replacer builds its tables (6 KiB) on first
// use, which was a seventh of a search's allocations when built per call.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// LikeEscape is the ESCAPE clause that goes with Contains.
const LikeEscape = `ESCAPE '\'`

// RunExclusive runs fn unless another node is already running the work
// called name, and reports whether it ran (a batch job that one node at a
// time should run).
func (db *DB) RunExclusive(ctx context.Context, name string, fn func(ctx context.Context) error) (bool, error) {
	return db.exclusive(ctx, name, false, fn)
}

// Serialized runs fn once no other node is running the work called name,
// waiting for it (start-up steps that must not interleave, like seeding).
func (db *DB) Serialized(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	_, err := db.exclusive(ctx, name, true, fn)
	return err
}

// exclusive holds a Postgres advisory lock for the duration of fn on a
// connection of its own, outside any transaction: a transaction held open
// for a long seed or job would pin the server's xmin horizon, so no dead
// row version anywhere could be pruned until it ended (a bulk seed's
// counter rows then grew chains of dead versions that every insert walked).
// The lock is keyed by the current schema and the name: deployments (and
// test schemas) sharing one Postgres database do not keep each other's jobs
// out. If the connection dies, Postgres releases the lock; a connection
// whose unlock fails is closed rather than returned to the pool with the
// lock still held. SQLite serves one node, so fn always runs there.
func (db *DB) exclusive(ctx context.Context, name string, wait bool, fn func(ctx context.Context) error) (bool, error) {
	if db.dialect != Postgres {
		return true, fn(ctx)
	}
	sqlDB, err := db.gorm.DB()
	if err != nil {
		return false, err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	const key = "hashtext(current_schema() || '/' || $1)"
	if wait {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(7312, "+key+")", name); err != nil {
			return false, err
		}
	} else {
		var got bool
		if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(7312, "+key+")", name).Scan(&got); err != nil || !got {
			return false, err
		}
	}
	defer func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7312, "+key+")", name); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // drop it: it may still hold the lock
		}
	}()
	return true, fn(WithoutTx(ctx))
}
