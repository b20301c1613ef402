package db

import (
	"database/sql"

	"gorm.io/gorm"
)

// Collect reads every row of rows (the result of a query that failed with
// err, when err is not nil) into a T each, through the scan destinations
// fields gives, and closes rows: plain Scan calls where an ORM's reflective
// scan costs more than the query. size is how many rows to expect (a
// page's size; 0 when unknown), so that a page's slice is allocated once.
// The result is never nil, so it encodes as [] when empty.
//
// Every row is scanned into one T and copied out, so fields runs once:
// Scan overwrites each destination on every row (a NULL included), and
// what it allocates for a row (strings, pointed-to values) is that row's.
func Collect[T any](rows *sql.Rows, err error, size int, fields func(*T) []any) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return CollectFrom(rows, size, fields)
}

// CollectFrom is Collect of rows that the caller closes, such as a Read's.
func CollectFrom[T any](rows Rows, size int, fields func(*T) []any) ([]T, error) {
	out := make([]T, 0, size)
	var t T
	dst := fields(&t)
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// CollectRows is Collect of the rows of q, a GORM chain, in place of its
// Scan or Find: those reflect over T for every row, and Scan also formats
// the statement with its values for the logger whether or not anything is
// logged (a sixth of the dashboard's CPU).
func CollectRows[T any](q *gorm.DB, size int, fields func(*T) []any) ([]T, error) {
	rows, err := q.Rows()
	return Collect(rows, err, size, fields)
}
