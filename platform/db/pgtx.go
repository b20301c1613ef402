package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// pgTx is a Postgres transaction that the service runs itself on one pooled
// connection, so that its statements share round trips. A round trip on
// this loopback was most of a move's cost in the service's own process
// (three quarters of its CPU in send and receive system calls, profiled on
// the evaluation submit), and each one woke a Postgres backend:
//
//   - BEGIN is not sent on its own: it goes out with the transaction's
//     first statement (a transaction that runs none sends nothing at all);
//   - reads that do not depend on each other go out together (Batch);
//   - writes whose result nobody reads go out with COMMIT (ExecAtCommit).
//
// It is the gorm.ConnPool of the transaction's GORM session. Neither
// TxBeginner nor TxCommitter, so GORM starts no transaction of its own
// inside it. The statements GORM builds (and whose *sql.Rows the
// database/sql API has no other way to give) run through database/sql on
// the same connection; pipelined ones through pgx, below it.
type pgTx struct {
	conn  *sql.Conn
	begun bool
	ahead []*pgx.QueuedQuery // writes for the next round trip (ExecWithNext)
	later []*pgx.QueuedQuery // writes for the commit's round trip
	// expectFailed: a deferred check failed (Speculative), whatever error
	// the layers above made of it.
	expectFailed bool
}

// send sends the queued statements of b in one round trip on the
// transaction's connection, preceded by BEGIN when the transaction has not
// begun and by the writes queued for it (ExecWithNext), and reads their
// results (running each one's callback) in order.
func (t *pgTx) send(ctx context.Context, b *pgx.Batch) error {
	first := t.ahead
	t.ahead = nil
	if !t.begun {
		first = append([]*pgx.QueuedQuery{{SQL: "BEGIN"}}, first...)
	}
	b.QueuedQueries = append(first, b.QueuedQueries...)
	err := t.conn.Raw(func(dc any) error {
		return dc.(validatedConn).Conn.Conn().SendBatch(ctx, b).Close()
	})
	// A statement's failure leaves the transaction begun (and aborted) for
	// the rollback to end. After any other failure (the round trip's, or a
	// Scan's) nothing ends it: the pool then drops the connection, still
	// inside a transaction or closed (validatedConn.IsValid).
	t.begun = t.begun || err == nil || isServerError(err)
	t.expectFailed = t.expectFailed || isSpeculationFailed(err)
	return err
}

func isServerError(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}

// begin sends BEGIN and the writes queued for the next round trip, before
// a statement that database/sql runs. If BEGIN fails, the connection is
// dropped, so that no statement of the transaction can run outside it.
func (t *pgTx) begin(ctx context.Context) error {
	if t.begun && len(t.ahead) == 0 {
		return nil
	}
	if err := t.send(ctx, &pgx.Batch{}); err != nil {
		if !t.begun {
			_ = t.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		return err
	}
	return nil
}

// ExecContext sends BEGIN and the queued writes with the statement. A
// statement without arguments runs as pgx runs it through database/sql, by
// the simple protocol, which takes several statements in one text (a
// migration's).
func (t *pgTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if (t.begun && len(t.ahead) == 0) || len(args) == 0 {
		if err := t.begin(ctx); err != nil {
			return nil, err
		}
		return t.conn.ExecContext(ctx, query, args...)
	}
	var b pgx.Batch
	var n int64
	b.Queue(query, args...).Exec(func(tag pgconn.CommandTag) error {
		n = tag.RowsAffected()
		return nil
	})
	if err := t.send(ctx, &b); err != nil {
		return nil, err
	}
	return driverResult(n), nil
}

type driverResult int64

func (r driverResult) LastInsertId() (int64, error) {
	return 0, errors.New("db: LastInsertId is not supported on Postgres")
}
func (r driverResult) RowsAffected() (int64, error) { return int64(r), nil }

func (t *pgTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return t.conn.QueryContext(ctx, query, args...)
}

func (t *pgTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	// A *sql.Row carries its error only from a query: after a failed BEGIN
	// the connection is gone, and the query fails with ErrConnDone; after a
	// failed queued write, the transaction is aborted and the query fails.
	_ = t.begin(ctx)
	return t.conn.QueryRowContext(ctx, query, args...)
}

func (t *pgTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return t.conn.PrepareContext(ctx, query)
}

// reads runs rs in one round trip.
func (t *pgTx) reads(ctx context.Context, rs []Read) error {
	var b pgx.Batch
	for _, r := range rs {
		b.Queue(r.SQL, r.Args...).Query(func(rows pgx.Rows) error { return r.Scan(rows) })
	}
	return t.send(ctx, &b)
}

// execNext queues a write for the next round trip.
func (t *pgTx) execNext(query string, args []any) {
	t.ahead = append(t.ahead, &pgx.QueuedQuery{SQL: query, Arguments: args})
}

// execLater queues a write for the commit's round trip.
func (t *pgTx) execLater(query string, args []any) {
	t.later = append(t.later, &pgx.QueuedQuery{SQL: query, Arguments: args})
}

// commit sends the queued writes and COMMIT in one round trip; nothing
// when the transaction ran no statement and queued none.
func (t *pgTx) commit(ctx context.Context) error {
	if !t.begun && len(t.ahead) == 0 && len(t.later) == 0 {
		return nil
	}
	b := pgx.Batch{QueuedQueries: append(t.later, &pgx.QueuedQuery{SQL: "COMMIT"})}
	return t.send(ctx, &b)
}

// rollback ends a begun transaction. A failure leaves the connection
// inside it, and the pool drops such a connection (validatedConn.IsValid).
func (t *pgTx) rollback(ctx context.Context) {
	if t.begun {
		_, _ = t.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	}
}

// inPostgresTx runs fn in a pgTx on a connection of the pool: first
// speculatively, and once more without speculation if a check fn deferred
// failed it (Speculative).
func (db *DB) inPostgresTx(ctx context.Context, fn func(ctx context.Context) error) error {
	conn, err := db.reads.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	t, err := db.runPostgresTx(ctx, conn, fn, true)
	if err != nil && t.expectFailed {
		_, err = db.runPostgresTx(ctx, conn, fn, false)
	}
	return err
}

func (db *DB) runPostgresTx(ctx context.Context, conn *sql.Conn, fn func(ctx context.Context) error, speculative bool) (*pgTx, error) {
	t := &pgTx{conn: conn}
	st := &txState{tx: db.gorm.Session(&gorm.Session{Context: ctx, NewDB: true}), pg: t, speculative: speculative}
	st.tx.Statement.ConnPool = t
	defer func() {
		if p := recover(); p != nil {
			t.rollback(ctx)
			panic(p)
		}
	}()
	if err := fn(context.WithValue(ctx, txKey{}, st)); err != nil {
		t.rollback(ctx)
		return t, err
	}
	if err := t.commit(ctx); err != nil {
		t.rollback(ctx)
		return t, err
	}
	for _, f := range st.afterCommit {
		f()
	}
	return t, nil
}

// speculationFailed is the SQLSTATE of a deferred check that did not hold
// (ExpectFunction).
const speculationFailed = "CF001"

func isSpeculationFailed(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == speculationFailed
}

// Speculative reports whether the transaction in ctx may defer a check
// to a later round trip: a write queued by ExecWithNext (or ExecAtCommit)
// that raises, through a function made by ExpectFunction, when it finds it
// cannot apply. The transaction then fails, and is rolled back and run
// again from the start with Speculative false, when the caller checks at
// once. A caller speculates where the check almost always holds and its
// own round trip is the cost (a budget reservation that fits); everything
// fn does must then be fit to run twice, as a retried transaction's work
// is. Only a Postgres transaction's first run is speculative: on SQLite a
// statement costs no round trip.
func Speculative(ctx context.Context) bool {
	st, ok := ctx.Value(txKey{}).(*txState)
	return ok && st != nil && st.speculative
}

// ExpectFunction is the statement, for a module's Postgres migration,
// that creates name(ok boolean): it returns true when ok holds and
// otherwise raises the error that makes a speculative transaction run
// again. A deferred check selects name(<whether its write applied>).
func ExpectFunction(name string) string {
	return `CREATE OR REPLACE FUNCTION ` + name + `(ok boolean) RETURNS boolean LANGUAGE plpgsql AS $$
		BEGIN
			IF ok IS NOT TRUE THEN
				RAISE EXCEPTION 'a deferred check did not hold' USING ERRCODE = '` + speculationFailed + `';
			END IF;
			RETURN true;
		END $$`
}
