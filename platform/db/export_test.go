package db

import (
	"database/sql"

	"gorm.io/gorm"
)

// PoolStats returns the statistics of the main pool (the SQLite writer, or
// Postgres) and of the SQLite readers (zero on Postgres).
func PoolStats(d *DB) (main, readers sql.DBStats) {
	sqlDB, err := d.gorm.DB()
	if err != nil {
		panic(err)
	}
	main = sqlDB.Stats()
	if d.resolver != nil {
		_ = d.resolver.Call(func(p gorm.ConnPool) error {
			if r, ok := p.(*sql.DB); ok && r != sqlDB {
				readers = r.Stats()
			}
			return nil
		})
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
