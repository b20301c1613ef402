package db

import "database/sql"

// Collect reads every row of rows (the result of a query that failed with
// err, when err is not nil) into a new T each, through the scan
// destinations fields gives for it, and closes rows: plain Scan calls where
// an ORM's reflective scan costs more than the query. The result is never
// nil, so it encodes as [] when empty.
func Collect[T any](rows *sql.Rows, err error, fields func(*T) []any) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var t T
		if err := rows.Scan(fields(&t)...); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
