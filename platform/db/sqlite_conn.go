package db

/*
// go-sqlite3 compiles SQLite into this binary, but its Go API has no
// sqlite3_db_config. The symbol is declared weak so that cgo's trial link of
// this package alone, which lacks SQLite, succeeds; the binary's final link
// resolves it to go-sqlite3's copy.
extern int sqlite3_db_config(void *db, int op, ...) __attribute__((weak));

// SQLITE_DBCONFIG_ENABLE_QPSG, from sqlite3.h.
#define CF_DBCONFIG_ENABLE_QPSG 1007

// cf_qpsg sets the query planner stability guarantee to on (1), off (0) or
// leaves it (-1), and returns the setting then in force, or -1 on failure.
static int cf_qpsg(void *db, int on) {
	int now = -1;
	if (sqlite3_db_config == 0 || db == 0) return -1;
	if (sqlite3_db_config(db, CF_DBCONFIG_ENABLE_QPSG, on, &now) != 0) return -1;
	return now;
}
*/
import "C"

import (
	"database/sql"
	"errors"
	"reflect"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// Every SQLite connection of the server runs with the query planner
// stability guarantee (QPSG) on. Without it, SQLite (3.54) plans a
// statement with "col = ?" and an ORDER BY using the value bound to ?, and
// marks it to be planned again when that binding changes; go-sqlite3
// clears a cached statement's bindings before each use, which SQLite takes
// as such a change. So such statements (a contract's thread, a drafter's
// contracts by date) were parsed and planned again on every execution,
// cached or not: the thread cost 115 µs instead of 45. With QPSG the
// planner never looks at bound values; the queries here do not need it to
// (partial indexes are matched by literals written into the SQL, and LIKE
// patterns start with a wildcard).
const (
	readerDriver = "sqlite3_reader"
	// writerDriver also turns automatic checkpoints off (checkpoint.go).
	writerDriver = "sqlite3_writer"
)

var registerDrivers sync.Once

// sqliteDriver returns the name of the registered driver for the writer
// or a reader connection.
func sqliteDriver(writer bool) string {
	registerDrivers.Do(func() {
		sql.Register(readerDriver, &sqlite3.SQLiteDriver{ConnectHook: stableQueryPlans})
		sql.Register(writerDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			if err := stableQueryPlans(c); err != nil {
				return err
			}
			_, err := c.Exec("PRAGMA wal_autocheckpoint = 0", nil)
			return err
		}})
	})
	if writer {
		return writerDriver
	}
	return readerDriver
}

func stableQueryPlans(c *sqlite3.SQLiteConn) error {
	if on, err := qpsg(c, 1); err != nil || on != 1 {
		return errors.Join(errors.New("db: could not turn on the SQLite query planner stability guarantee"), err)
	}
	return nil
}

// qpsg applies cf_qpsg to c's handle, read from the driver's unexported
// field "db": the driver offers no other way to it. A go-sqlite3 upgrade
// that renames the field fails every connection, and the tests with it.
func qpsg(c *sqlite3.SQLiteConn, on int) (int, error) {
	f := reflect.ValueOf(c).Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return -1, errors.New("db: go-sqlite3 keeps no sqlite3 handle in field db")
	}
	return int(C.cf_qpsg(f.UnsafePointer(), C.int(on))), nil
}
