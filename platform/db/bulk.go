package db

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// maxBulkParams stays under SQLite's 32 766 bound variables (and Postgres'
// 65 535).
const maxBulkParams = 30_000

// InsertRows writes rows into table with multi-row INSERTs of up to 1 000
// rows, in the transaction in ctx (or one of its own): the fast path of a
// module's bulk demo data. columns lists the columns in the rows' order.
// It goes to the driver directly, the full-size statement prepared once:
// GORM's statement building and logging cost more than the insert itself
// at 30 000 parameters. Only the table's owner calls it, from its store or
// seed code.
func (db *DB) InsertRows(ctx context.Context, table string, columns []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	return db.InTx(ctx, func(ctx context.Context) error {
		return db.insertRows(ctx, table, columns, rows)
	})
}

func (db *DB) insertRows(ctx context.Context, table string, columns []string, rows [][]any) error {
	cols := len(columns)
	per := min(maxBulkParams/cols, 1000)
	statement := func(n int) string {
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES ")
		p := 0
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for j := range cols {
				if j > 0 {
					b.WriteByte(',')
				}
				p++
				if db.dialect == Postgres {
					b.WriteString("$" + strconv.Itoa(p))
				} else {
					b.WriteByte('?')
				}
			}
			b.WriteByte(')')
		}
		return b.String()
	}
	pool := db.Conn(ctx).Statement.ConnPool
	var full *sql.Stmt
	defer func() {
		if full != nil {
			_ = full.Close()
		}
	}()
	args := make([]any, 0, per*cols)
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		args = args[:0]
		for _, r := range rows[start:end] {
			if len(r) != cols {
				return fmt.Errorf("insert into %s: a row of %d values for %d columns", table, len(r), cols)
			}
			args = append(args, r...)
		}
		var err error
		if end-start == per {
			if full == nil {
				if full, err = pool.PrepareContext(ctx, statement(per)); err != nil {
					return fmt.Errorf("insert into %s: %w", table, err)
				}
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = pool.ExecContext(ctx, statement(end-start), args...)
		}
		if err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}
