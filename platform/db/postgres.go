package db

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
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
	pool := sql.OpenDB(validatingConnector{stdlib.GetConnector(*cfg)})
	g, err := gorm.Open(postgres.New(postgres.Config{Conn: pool}), gcfg)
	if err != nil {
		_ = pool.Close()
	}
	return g, err
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
