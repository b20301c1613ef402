package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// openPostgres opens a pool of pgx connections that database/sql can tell
// apart when they die. pgx closes a connection whose context is cancelled
// mid-statement, or whose rollback could not be sent, but its database/sql
// connection does not implement driver.Validator, so database/sql pooled the
// dead connection again and found out only when it handed it to the next
// caller: a BEGIN that drew three in a row failed with "driver: bad
// connection", so a request cancelled by its client could fail another
// user's request (TestCancelledTransactionsLeaveOthersAlone).
func openPostgres(dsn string, gcfg *gorm.Config) (*gorm.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	for k, v := range sessionDefaults {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
	pool := sql.OpenDB(validatingConnector{stdlib.GetConnector(*cfg)})
	g, err := gorm.Open(postgres.New(postgres.Config{Conn: pool}), gcfg)
	if err != nil {
		_ = pool.Close()
		return nil, err
	}
	g.ClauseBuilders["LIMIT"] = literalLimit
	return g, nil
}

// sessionDefaults are the service's settings of its own Postgres sessions,
// sent in the startup message (no round trip) unless the DSN names them.
// Every statement of the service is short: the largest read, the
// dashboard's 36 period sums, takes a few ms. With the table statistics
// autovacuum keeps, its plan crossed the parallel query costs, and starting
// two workers per execution made it 2.2 times slower under load (p50 35 →
// 81 ms at 8 clients); JIT compiling, which starts at a similar cost, would
// add its milliseconds to the same statements.
var sessionDefaults = map[string]string{"max_parallel_workers_per_gather": "0", "jit": "off"}

// literalLimit writes a built statement's LIMIT as a number, not a
// parameter. Postgres costs a generic plan whose LIMIT is a parameter as if
// it returned a tenth of the rows, so next to the custom plan for LIMIT 20
// it always looked dearer, and every execution of an inbox page was planned
// again: 0.3–0.4 ms, longer than running it. With the number in the text
// the generic plan costs what the custom one does, and Postgres keeps it
// after five executions. OFFSET stays a parameter: page one has none, and
// each deeper page would otherwise be a statement of its own.
func literalLimit(c clause.Clause, b clause.Builder) {
	l, ok := c.Expression.(clause.Limit)
	if !ok || l.Limit == nil || *l.Limit < 0 {
		c.Build(b)
		return
	}
	b.WriteString("LIMIT " + strconv.Itoa(*l.Limit))
	if l.Offset > 0 {
		b.WriteString(" OFFSET ")
		b.AddVar(b, l.Offset)
	}
}

type validatingConnector struct{ driver.Connector }

func (c validatingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return validatedConn{conn.(*stdlib.Conn)}, nil
}

// validatedConn is pgx's connection with every method it has, plus IsValid.
type validatedConn struct{ *stdlib.Conn }

// IsValid is asked before the pool keeps a connection: one that pgx closed,
// or that is still inside a transaction, is dropped there.
func (c validatedConn) IsValid() bool {
	pg := c.Conn.Conn().PgConn()
	return !pg.IsClosed() && pg.TxStatus() == 'I'
}
