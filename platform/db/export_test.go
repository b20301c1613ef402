package db

import (
	"context"
	"database/sql"

	"github.com/mattn/go-sqlite3"
)

// PoolStats returns the statistics of the main pool (the SQLite writer, or
// Postgres) and of the SQLite readers (zero on Postgres).
func PoolStats(d *DB) (main, readers sql.DBStats) {
	sqlDB, err := d.gorm.DB()
	if err != nil {
		panic(err)
	}
	main = sqlDB.Stats()
	if d.reads != sqlDB {
		readers = d.reads.Stats()
	}
	return main, readers
}

// Queued is how many transactions wait for the SQLite writer behind the
// group it is running (0 on Postgres).
func Queued(d *DB) int {
	if d.group == nil {
		return 0
	}
	return len(d.group.queue)
}

// QueryPlanStability reads SQLITE_DBCONFIG_ENABLE_QPSG on a connection of
// the writer's pool and of the readers'.
func QueryPlanStability(d *DB) (writer, reader int, err error) {
	read := func(pool *sql.DB) (int, error) {
		conn, err := pool.Conn(context.Background())
		if err != nil {
			return -1, err
		}
		defer conn.Close()
		on := -1
		err = conn.Raw(func(dc any) (err error) {
			on, err = qpsg(dc.(*sqlite3.SQLiteConn), -1)
			return err
		})
		return on, err
	}
	sqlDB, err := d.gorm.DB()
	if err != nil {
		return -1, -1, err
	}
	if writer, err = read(sqlDB); err != nil {
		return writer, -1, err
	}
	reader, err = read(d.reads)
	return writer, reader, err
}
