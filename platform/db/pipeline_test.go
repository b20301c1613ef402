package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/testkit"
)

// namesRead reads the names of items with a score of at least min, in
// order, into *out.
func namesRead(min int, out *[]string) db.Read {
	return db.Read{SQL: `SELECT name FROM items WHERE score >= $1 ORDER BY name`, Args: []any{min},
		Scan: func(rows db.Rows) error {
			*out = []string{}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					return err
				}
				*out = append(*out, s)
			}
			return rows.Err()
		}}
}

func addItem(ctx context.Context, d *db.DB, name string, score int) error {
	_, err := d.Conn(ctx).Statement.ConnPool.ExecContext(ctx, `INSERT INTO items (id, name, score) VALUES ($1, $2, $3)`,
		uuid.NewString(), name, score)
	return err
}

// openWithItems opens a database holding items a (score 1) and b (2).
func openWithItems(t *testing.T, driver string) (*db.DB, context.Context) {
	t.Helper()
	d := openDB(t, driver)
	ctx := context.Background()
	require.NoError(t, addItem(ctx, d, "a", 1))
	require.NoError(t, addItem(ctx, d, "b", 2))
	return d, ctx
}

// TestBatch runs reads in one Batch, outside and inside transactions,
// where they are the transaction's first statements (on Postgres they then
// carry its BEGIN) and where they follow its writes.
func TestBatch(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d, ctx := openWithItems(t, driver)

		var all, high []string
		require.NoError(t, d.Batch(ctx, namesRead(0, &all), namesRead(2, &high)))
		assert.Equal(t, []string{"a", "b"}, all)
		assert.Equal(t, []string{"b"}, high)

		failed := errors.New("roll back")
		err := d.InTx(ctx, func(ctx context.Context) error {
			require.NoError(t, d.Batch(ctx, namesRead(0, &all)), "the transaction's first statement")
			require.NoError(t, addItem(ctx, d, "c", 3))
			require.NoError(t, d.Batch(ctx, namesRead(0, &all), namesRead(3, &high)))
			assert.Equal(t, []string{"a", "b", "c"}, all, "the transaction's own write")
			assert.Equal(t, []string{"c"}, high)
			return failed
		})
		require.ErrorIs(t, err, failed)
		require.NoError(t, d.Batch(ctx, namesRead(0, &all)))
		assert.Equal(t, []string{"a", "b"}, all, "the write of a transaction begun by a Batch is rolled back")

		require.NoError(t, d.InTx(ctx, func(ctx context.Context) error { return addItem(ctx, d, "d", 4) }),
			"a transaction whose first statement is a write")
		require.NoError(t, d.Batch(ctx, namesRead(4, &high)))
		assert.Equal(t, []string{"d"}, high)

		err = d.Batch(ctx, namesRead(0, &all), db.Read{SQL: `SELECT nothing FROM items`, Scan: func(db.Rows) error { return nil }})
		assert.Error(t, err, "a failing read fails the batch")
		require.NoError(t, d.InTx(ctx, func(ctx context.Context) error { return nil }), "a transaction that runs nothing")
		err = d.InTx(ctx, func(ctx context.Context) error {
			return d.Batch(ctx, db.Read{SQL: `SELECT nothing FROM items WHERE score = $1`, Args: []any{1}, Scan: func(db.Rows) error { return nil }})
		})
		assert.Error(t, err, "a failing first statement")
		require.NoError(t, d.Batch(ctx, namesRead(0, &all)), "the pool is usable after it")
		assert.Equal(t, []string{"a", "b", "d"}, all)
	})
}

// TestBatchReadsAfterTheLock is what the evaluation's move relies on: a
// locking read and a read of what the lock guards, sent together; the
// second sees a write committed by the transaction the lock waited for.
func TestBatchReadsAfterTheLock(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		require.NoError(t, d.Conn(ctx).Exec(`INSERT INTO parents (id, name) VALUES ('p', 'parent')`).Error)
		lock := `SELECT name FROM parents WHERE id = $1`
		if d.Dialect() == db.Postgres {
			lock += ` FOR UPDATE`
		}
		locked := make(chan struct{})
		release := make(chan struct{})
		writer := make(chan error, 1)
		go func() {
			writer <- d.InTx(ctx, func(ctx context.Context) error {
				var name []string
				if err := d.Batch(ctx, db.Read{SQL: lock, Args: []any{"p"}, Scan: func(rows db.Rows) error {
					for rows.Next() {
						var s string
						_ = rows.Scan(&s)
						name = append(name, s)
					}
					return rows.Err()
				}}); err != nil {
					return err
				}
				if err := addItem(ctx, d, "guarded", 9); err != nil {
					return err
				}
				close(locked)
				<-release
				return nil
			})
		}()
		<-locked
		reader := make(chan []string, 1)
		go func() {
			var seen []string
			err := d.InTx(ctx, func(ctx context.Context) error {
				return d.Batch(ctx, db.Read{SQL: lock, Args: []any{"p"}, Scan: func(db.Rows) error { return nil }}, namesRead(9, &seen))
			})
			assert.NoError(t, err)
			reader <- seen
		}()
		select {
		case got := <-reader:
			t.Fatalf("the locking read did not wait for the lock: saw %v", got)
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		require.NoError(t, <-writer)
		assert.Equal(t, []string{"guarded"}, <-reader)
	})
}

// TestExecAtCommit checks the writes sent with COMMIT: not visible to
// others before the commit, written by it, dropped with a rolled-back
// transaction, and failing the commit (and the whole transaction) when
// they fail.
func TestExecAtCommit(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		insert := `INSERT INTO items (id, name, score, code) VALUES ($1, $2, $3, $4)`
		var names []string
		require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
			require.NoError(t, d.ExecAtCommit(ctx, insert, uuid.NewString(), "later", 5, "L"))
			require.NoError(t, d.Batch(context.Background(), namesRead(5, &names)))
			assert.Empty(t, names, "another connection before the commit")
			return addItem(ctx, d, "now", 5)
		}))
		require.NoError(t, d.Batch(ctx, namesRead(5, &names)))
		assert.Equal(t, []string{"later", "now"}, names)

		failed := errors.New("roll back")
		require.ErrorIs(t, d.InTx(ctx, func(ctx context.Context) error {
			require.NoError(t, d.ExecAtCommit(ctx, insert, uuid.NewString(), "dropped", 6, "D"))
			return failed
		}), failed)

		err := d.InTx(ctx, func(ctx context.Context) error {
			if err := addItem(ctx, d, "undone", 6); err != nil {
				return err
			}
			return d.ExecAtCommit(ctx, insert, uuid.NewString(), "duplicate", 6, "L")
		})
		assert.Error(t, err, "the unique code fails the commit")
		require.NoError(t, d.Batch(ctx, namesRead(6, &names)))
		assert.Empty(t, names, "nothing of either transaction is written")

		require.NoError(t, d.ExecAtCommit(ctx, insert, uuid.NewString(), "alone", 7, "A"), "outside a transaction it runs at once")
		require.NoError(t, d.Batch(ctx, namesRead(7, &names)))
		assert.Equal(t, []string{"alone"}, names)
	})
}

// TestSpeculation checks checks deferred to a later round trip, with the
// next statement (ExecWithNext) or with the commit (ExecAtCommit): when
// they hold the transaction runs once; when one fails, nothing of the
// first run is written and the transaction runs again without
// speculation, whatever error the failing statement's caller returned.
// SQLite never speculates.
func TestSpeculation(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		if d.Dialect() == db.SQLite {
			require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
				assert.False(t, db.Speculative(ctx))
				return nil
			}))
			return
		}
		require.NoError(t, d.Conn(ctx).Exec(db.ExpectFunction("items_expect")).Error)
		assert.False(t, db.Speculative(ctx), "outside a transaction")
		// claim writes name and defers the check that no other item has
		// score, with the next statement or with the commit.
		check := `SELECT items_expect(NOT EXISTS (SELECT 1 FROM items WHERE score = $1 AND name <> $2))`
		claim := func(ctx context.Context, name string, score int, atCommit bool) error {
			if err := addItem(ctx, d, name, score); err != nil {
				return err
			}
			if atCommit {
				return d.ExecAtCommit(ctx, check, score, name)
			}
			return d.ExecWithNext(ctx, check, score, name)
		}
		var names []string
		for _, atCommit := range []bool{false, true} {
			var runs []bool
			require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
				runs = append(runs, db.Speculative(ctx))
				if err := claim(ctx, fmt.Sprint("first", atCommit), 10+btoi(atCommit), atCommit); err != nil {
					return err
				}
				return d.Batch(ctx, namesRead(0, &names))
			}))
			assert.Equal(t, []bool{true}, runs, "a check that holds: one run")

			runs = nil
			require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
				speculative := db.Speculative(ctx)
				runs = append(runs, speculative)
				if !speculative {
					return addItem(ctx, d, fmt.Sprint("careful", atCommit), 20+btoi(atCommit))
				}
				if err := claim(ctx, "hopeful", 10+btoi(atCommit), atCommit); err != nil {
					return err
				}
				if err := addItem(ctx, d, "next", 30); err != nil {
					return errors.New("the next statement failed") // the error's kind is lost
				}
				return nil
			}))
			assert.Equal(t, []bool{true, false}, runs, "a check that fails: run again without speculation")
		}
		require.NoError(t, d.Batch(ctx, namesRead(0, &names)))
		assert.Equal(t, []string{"carefulfalse", "carefultrue", "firstfalse", "firsttrue"}, names, "the first runs' writes are rolled back")

		failed := errors.New("refused")
		var runs []bool
		require.ErrorIs(t, d.InTx(ctx, func(ctx context.Context) error {
			runs = append(runs, db.Speculative(ctx))
			if err := claim(ctx, "again", 10, false); err != nil {
				return err
			}
			if !db.Speculative(ctx) {
				return failed
			}
			return nil
		}), failed)
		assert.Equal(t, []bool{true, false}, runs, "the second run's answer is the transaction's")
		require.NoError(t, d.Batch(ctx, namesRead(0, &names)))
		assert.Len(t, names, 4)
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ReadGenericPlan reads as Batch does; on Postgres its read alone runs with
// plan_cache_mode force_generic_plan, which ends with its round trip and
// never reaches a transaction's other statements.
func TestReadGenericPlan(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d, ctx := openWithItems(t, driver)
		var high []string
		require.NoError(t, d.ReadGenericPlan(ctx, namesRead(2, &high)))
		assert.Equal(t, []string{"b"}, high)
		if d.Dialect() != db.Postgres {
			return
		}
		setting := func(ctx context.Context, read func(context.Context, db.Read) error) string {
			var mode string
			require.NoError(t, read(ctx, db.Read{SQL: `SELECT current_setting('plan_cache_mode')`, Scan: func(rows db.Rows) error {
				for rows.Next() {
					if err := rows.Scan(&mode); err != nil {
						return err
					}
				}
				return rows.Err()
			}}))
			return mode
		}
		batch := func(ctx context.Context, r db.Read) error { return d.Batch(ctx, r) }
		assert.Equal(t, "force_generic_plan", setting(ctx, d.ReadGenericPlan))
		for range 3 { // every connection of the pool is back to the default
			assert.Equal(t, "auto", setting(ctx, batch))
		}
		require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
			assert.Equal(t, "auto", setting(ctx, d.ReadGenericPlan), "not inside a transaction")
			return nil
		}))
	})
}
