package db

import (
	"context"
	"fmt"
	"strings"
)

// maxBulkParams stays under SQLite's 32 766 bound variables (and Postgres'
// 65 535).
const maxBulkParams = 30_000

// InsertRows writes rows into table with multi-row INSERTs of up to 1 000
// rows, on the transaction in ctx (or the database): the fast path of a
// module's bulk demo data. columns lists the columns in the rows' order.
// Only the table's owner calls it, from its store or seed code.
func (db *DB) InsertRows(ctx context.Context, table string, columns []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	cols := len(columns)
	per := min(maxBulkParams/cols, 1000)
	head := "INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES "
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	conn := db.Conn(ctx)
	args := make([]any, 0, per*cols)
	var full string
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		args = args[:0]
		for _, r := range rows[start:end] {
			if len(r) != cols {
				return fmt.Errorf("insert into %s: a row of %d values for %d columns", table, len(r), cols)
			}
			args = append(args, r...)
		}
		q := full
		if end-start != per || q == "" {
			q = head + strings.TrimSuffix(strings.Repeat(one+",", end-start), ",")
			if end-start == per {
				full = q
			}
		}
		if err := conn.Exec(q, args...).Error; err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}
