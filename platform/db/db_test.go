package db_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/plugin/dbresolver"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/testkit"
)

type item struct {
	ID       string
	Name     string
	Score    int
	Code     *string
	ParentID *string
}

func (item) TableName() string { return "items" }

type parent struct {
	ID   string
	Name string
}

func (parent) TableName() string { return "parents" }

// openDB opens a new, empty database of driver with the test tables and
// closes it when the test ends.
func openDB(t *testing.T, driver string) *db.DB {
	t.Helper()
	cfg := db.Config{Driver: driver, MaxOpenConns: 8}
	switch driver {
	case "sqlite":
		cfg.DSN = filepath.Join(t.TempDir(), "cf.db")
	case "postgres":
		cfg.DSN = testkit.FreshSchema(t)
	default:
		t.Fatalf("unknown driver %q", driver)
	}
	d, err := db.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	for _, s := range []string{
		`CREATE TABLE parents (id VARCHAR(36) PRIMARY KEY, name VARCHAR(100) NOT NULL)`,
		`CREATE TABLE items (id VARCHAR(36) PRIMARY KEY, name VARCHAR(100) NOT NULL, score INTEGER NOT NULL,
			code VARCHAR(20), parent_id VARCHAR(36) REFERENCES parents (id))`,
		`CREATE UNIQUE INDEX ux_items_code ON items (code)`,
	} {
		require.NoError(t, d.Conn(context.Background()).Exec(s).Error)
	}
	return d
}

func insertItem(ctx context.Context, d *db.DB, name string) error {
	return d.Conn(ctx).Create(&item{ID: uuid.NewString(), Name: name}).Error
}

func countItems(t *testing.T, ctx context.Context, d *db.DB) int64 {
	t.Helper()
	var n int64
	require.NoError(t, d.Conn(ctx).Model(&item{}).Count(&n).Error)
	return n
}

func TestOpenSQLiteCreatesFileAndFolders(t *testing.T) {
	tests := []struct {
		name string
		dsn  func(dir string) (dsn, path string)
	}{
		{name: "plain path in missing folders", dsn: func(dir string) (string, string) {
			p := filepath.Join(dir, "a", "b", "c", "cf.db")
			return p, p
		}},
		{name: "file: URI with parameters", dsn: func(dir string) (string, string) {
			p := filepath.Join(dir, "x", "cf.db")
			return "file:" + p + "?cache=shared", p
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dsn, path := tc.dsn(t.TempDir())
			d, err := db.Open(db.Config{Driver: "sqlite", DSN: dsn, MaxOpenConns: 2})
			require.NoError(t, err)
			defer d.Close()
			assert.Equal(t, db.SQLite, d.Dialect())
			require.NoError(t, d.Conn(context.Background()).Exec("CREATE TABLE t (x INTEGER)").Error)
			_, err = os.Stat(path)
			assert.NoError(t, err, "database file exists")
		})
	}
}

func TestOpenRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  db.Config
		want string
	}{
		{name: "unknown driver", cfg: db.Config{Driver: "oracle", DSN: "x"}, want: "oracle"},
		{name: "unreachable postgres", cfg: db.Config{Driver: "postgres",
			DSN: "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"}, want: "postgres"},
		{name: "sqlite folder is a file", cfg: db.Config{Driver: "sqlite", DSN: "@file@"}, want: "sqlite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.DSN == "@file@" {
				f := filepath.Join(t.TempDir(), "plain")
				require.NoError(t, os.WriteFile(f, nil, 0o600))
				cfg.DSN = filepath.Join(f, "cf.db")
			}
			d, err := db.Open(cfg)
			if err == nil {
				_ = d.Close()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestSQLitePragmas(t *testing.T) {
	d := openDB(t, "sqlite")
	ctx := context.Background()
	pragma := func(conn *gorm.DB, name string) string {
		var v string
		require.NoError(t, conn.Raw("PRAGMA "+name).Scan(&v).Error)
		return v
	}
	tests := []struct {
		name   string
		pragma string
		want   string
	}{
		{"journal_mode", "journal_mode", "wal"},
		{"foreign_keys", "foreign_keys", "1"},
		{"busy_timeout", "busy_timeout", "10000"},
		{"synchronous NORMAL", "synchronous", "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name+" on writer", func(t *testing.T) {
			var got string
			require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
				got = pragma(d.Conn(ctx), tc.pragma)
				return nil
			}))
			assert.Equal(t, tc.want, got)
		})
		t.Run(tc.name+" on reader", func(t *testing.T) {
			assert.Equal(t, tc.want, pragma(d.Conn(ctx).Clauses(dbresolver.Read), tc.pragma))
		})
	}
}

// Collect scans every row into one value and copies it out: a row's NULL
// must not keep the previous row's value, nor may two rows share what a
// pointer field points to.
func TestCollectKeepsRowsApart(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		code := func(s string) *string { return &s }
		for i, c := range []*string{code("A"), nil, code("C"), nil} {
			require.NoError(t, d.Conn(ctx).Create(&item{ID: fmt.Sprint(i), Name: fmt.Sprint("n", i), Score: i, Code: c}).Error)
		}
		rows, err := d.Query(ctx, `SELECT id, name, score, code FROM items ORDER BY score`)
		got, err := db.Collect(rows, err, 2, func(it *item) []any { return []any{&it.ID, &it.Name, &it.Score, &it.Code} })
		require.NoError(t, err)
		require.Len(t, got, 4)
		assert.Equal(t, []*string{code("A"), nil, code("C"), nil}, []*string{got[0].Code, got[1].Code, got[2].Code, got[3].Code})
		assert.NotSame(t, got[0].Code, got[2].Code, "rows share a pointed-to value")
		for i, it := range got {
			assert.Equal(t, item{ID: fmt.Sprint(i), Name: fmt.Sprint("n", i), Score: i, Code: it.Code}, it)
		}
	})
}

// On Postgres a built statement's LIMIT is a number in its text, so that
// Postgres keeps one generic plan for it (postgres.go, literalLimit);
// OFFSET stays a parameter. The rows are those of the page either way.
func TestLimitIsLiteralOnPostgres(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		for i := range 5 {
			require.NoError(t, d.Conn(ctx).Create(&item{ID: fmt.Sprint(i), Name: fmt.Sprint("n", i), Score: i}).Error)
		}
		var got []item
		require.NoError(t, d.Conn(ctx).Order("score").Limit(2).Offset(1).Find(&got).Error)
		assert.Equal(t, []string{"1", "2"}, []string{got[0].ID, got[1].ID})
		if driver == "postgres" {
			dry := d.Conn(ctx).Session(&gorm.Session{DryRun: true}).Order("score").Limit(2).Offset(1).Find(&got)
			assert.Contains(t, dry.Statement.SQL.String(), "LIMIT 2 OFFSET $1")
		}
		got = nil
		require.NoError(t, d.Conn(ctx).Order("score").Limit(3).Find(&got).Error)
		assert.Len(t, got, 3)
	})
}

// Query reads inside the transaction in ctx (its own uncommitted rows), and
// outside one only what is committed, with $n placeholders on both engines.
func TestQuery(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		names := func(ctx context.Context, min string) []string {
			rows, err := d.Query(ctx, `SELECT name FROM items WHERE name >= $1 AND name <> $2 ORDER BY name`, min, "zz")
			got, err := db.Collect(rows, err, 0, func(s *string) []any { return []any{s} })
			require.NoError(t, err)
			return got
		}
		require.NoError(t, insertItem(ctx, d, "a"))
		require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
			require.NoError(t, insertItem(ctx, d, "b"))
			assert.Equal(t, []string{"a", "b"}, names(ctx, "a"), "inside the transaction")
			assert.Equal(t, []string{"a"}, names(context.Background(), "a"), "outside it, before the commit")
			return nil
		}))
		assert.Equal(t, []string{"b"}, names(ctx, "b"), "after the commit")
		_, err := d.Query(ctx, `SELECT nothing FROM items`)
		assert.Error(t, err)
	})
}

// TestConnectionsPlanStably checks that the writer and the readers run
// with SQLite's query planner stability guarantee (sqlite_conn.go): without
// it, every cached statement with "col = ?" and an ORDER BY was planned
// again on every execution.
func TestConnectionsPlanStably(t *testing.T) {
	d := openDB(t, "sqlite")
	writer, reader, err := db.QueryPlanStability(d)
	require.NoError(t, err)
	assert.Equal(t, 1, writer, "writer")
	assert.Equal(t, 1, reader, "reader")
}

// TestWriterLeavesCheckpointsToTheCheckpointer checks that commits do not
// checkpoint (the writer's wal_autocheckpoint is 0) and that the WAL still
// reaches the database file: the file grows past its empty size within a
// few checkpoint intervals of the writes, with no commit doing it.
func TestWriterLeavesCheckpointsToTheCheckpointer(t *testing.T) {
	dir := t.TempDir()
	d, err := db.Open(db.Config{Driver: "sqlite", DSN: filepath.Join(dir, "cf.db"), MaxOpenConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	ctx := context.Background()
	var auto int
	require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
		return d.Conn(ctx).Raw("PRAGMA wal_autocheckpoint").Scan(&auto).Error
	}))
	assert.Equal(t, 0, auto, "the writer checkpoints in its commits")
	require.NoError(t, d.Conn(ctx).Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`).Error)
	size := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, "cf.db"))
		require.NoError(t, err)
		return fi.Size()
	}
	before := size()
	for i := range 300 {
		require.NoError(t, d.Conn(ctx).Exec(`INSERT INTO t (id, v) VALUES (?, ?)`, i, strings.Repeat("x", 1000)).Error)
	}
	deadline := time.Now().Add(5 * time.Second)
	for size() < before+200*1000 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is still %d bytes: nothing checkpointed the WAL", size())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestForeignKeysEnforced(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		missing := uuid.NewString()
		err := d.InTx(ctx, func(ctx context.Context) error {
			return d.Conn(ctx).Create(&item{ID: uuid.NewString(), Name: "orphan", ParentID: &missing}).Error
		})
		require.Error(t, err)
		assert.ErrorIs(t, err, gorm.ErrForeignKeyViolated)
		assert.Zero(t, countItems(t, ctx, d))
	})
}

func TestConcurrentWriters(t *testing.T) {
	const writers = 50
	tests := []struct {
		name    string
		readers int
	}{
		{"writers only", 0},
		{"writers and readers", 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testkit.ForEachDriver(t, func(t *testing.T, driver string) {
				d := openDB(t, driver)
				ctx := context.Background()
				var (
					wg       sync.WaitGroup
					errs     = make(chan error, writers+tc.readers)
					done     = make(chan struct{})
					readsRun atomic.Int64
				)
				for i := range tc.readers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							var n int64
							if err := d.Conn(ctx).Model(&item{}).Count(&n).Error; err != nil {
								errs <- fmt.Errorf("reader %d: %w", i, err)
								return
							}
							readsRun.Add(1)
							select {
							case <-done:
								return
							default:
							}
						}
					}()
				}
				var writersWG sync.WaitGroup
				for i := range writers {
					writersWG.Add(1)
					go func() {
						defer writersWG.Done()
						err := d.InTx(ctx, func(ctx context.Context) error {
							// Read then write inside the transaction: the pattern
							// that deadlocks SQLite writers without BEGIN IMMEDIATE.
							var n int64
							if err := d.Conn(ctx).Model(&item{}).Count(&n).Error; err != nil {
								return err
							}
							return insertItem(ctx, d, fmt.Sprintf("w%02d", i))
						})
						if err != nil {
							errs <- fmt.Errorf("writer %d: %w", i, err)
						}
					}()
				}
				writersWG.Wait()
				close(done)
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				assert.Equal(t, int64(writers), countItems(t, ctx, d))
				if tc.readers > 0 {
					assert.Positive(t, readsRun.Load())
				}
			})
		})
	}
}

func TestReadsDoNotWaitForAnOpenWriteTransaction(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		require.NoError(t, insertItem(ctx, d, "committed"))

		inside, release := make(chan struct{}), make(chan struct{})
		txErr := make(chan error, 1)
		go func() {
			txErr <- d.InTx(ctx, func(ctx context.Context) error {
				if err := insertItem(ctx, d, "uncommitted"); err != nil {
					return err
				}
				close(inside)
				<-release
				return nil
			})
		}()
		<-inside
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		var n int64
		err := d.Conn(rctx).Model(&item{}).Count(&n).Error
		close(release)
		require.NoError(t, err, "a read outside the transaction must not queue behind the writer")
		assert.Equal(t, int64(1), n, "uncommitted row is invisible")
		require.NoError(t, <-txErr)
		assert.Equal(t, int64(2), countItems(t, ctx, d))
	})
}

func TestInTxNested(t *testing.T) {
	errInner := errors.New("inner failed")
	errOuter := errors.New("outer failed")
	tests := []struct {
		name      string
		innerErr  error
		outerErr  error
		swallow   bool // the outer function ignores the inner error
		wantErr   error
		wantCount int64
	}{
		{name: "both succeed", wantCount: 2},
		{name: "inner error rolls back everything", innerErr: errInner, wantErr: errInner, wantCount: 0},
		{name: "outer error rolls back inner work", outerErr: errOuter, wantErr: errOuter, wantCount: 0},
		{name: "swallowed inner error still commits the shared transaction", innerErr: errInner, swallow: true, wantCount: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testkit.ForEachDriver(t, func(t *testing.T, driver string) {
				d := openDB(t, driver)
				ctx := context.Background()
				err := d.InTx(ctx, func(outer context.Context) error {
					if err := insertItem(outer, d, "outer"); err != nil {
						return err
					}
					err := d.InTx(outer, func(inner context.Context) error {
						if d.Conn(inner) != d.Conn(outer) {
							return errors.New("inner InTx did not join the outer transaction")
						}
						if err := insertItem(inner, d, "inner"); err != nil {
							return err
						}
						return tc.innerErr
					})
					if err != nil && !tc.swallow {
						return err
					}
					return tc.outerErr
				})
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, tc.wantCount, countItems(t, ctx, d))
			})
		})
	}
}

func TestInTransaction(t *testing.T) {
	d := openDB(t, "sqlite")
	ctx := context.Background()
	assert.False(t, db.InTransaction(ctx))
	require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
		assert.True(t, db.InTransaction(ctx))
		assert.False(t, db.InTransaction(db.WithoutTx(ctx)))
		return nil
	}))
}

func TestAfterCommit(t *testing.T) {
	errFail := errors.New("fail")
	tests := []struct {
		name     string
		run      func(ctx context.Context, d *db.DB, f func()) error
		wantRuns int
	}{
		{name: "runs after commit", wantRuns: 1, run: func(ctx context.Context, d *db.DB, f func()) error {
			return d.InTx(ctx, func(ctx context.Context) error {
				if err := insertItem(ctx, d, "x"); err != nil {
					return err
				}
				db.AfterCommit(ctx, f)
				return nil
			})
		}},
		{name: "dropped on rollback", wantRuns: 0, run: func(ctx context.Context, d *db.DB, f func()) error {
			err := d.InTx(ctx, func(ctx context.Context) error {
				if err := insertItem(ctx, d, "x"); err != nil {
					return err
				}
				db.AfterCommit(ctx, f)
				return errFail
			})
			if !errors.Is(err, errFail) {
				return fmt.Errorf("want errFail, got %v", err)
			}
			return nil
		}},
		{name: "registered in nested InTx waits for the outermost commit", wantRuns: 1,
			run: func(ctx context.Context, d *db.DB, f func()) error {
				return d.InTx(ctx, func(ctx context.Context) error {
					if err := d.InTx(ctx, func(ctx context.Context) error {
						db.AfterCommit(ctx, f)
						return insertItem(ctx, d, "x")
					}); err != nil {
						return err
					}
					return nil
				})
			}},
		{name: "nested registration dropped when the outer rolls back", wantRuns: 0,
			run: func(ctx context.Context, d *db.DB, f func()) error {
				err := d.InTx(ctx, func(ctx context.Context) error {
					_ = d.InTx(ctx, func(ctx context.Context) error {
						db.AfterCommit(ctx, f)
						return nil
					})
					return errFail
				})
				if !errors.Is(err, errFail) {
					return fmt.Errorf("want errFail, got %v", err)
				}
				return nil
			}},
		{name: "runs at once without a transaction", wantRuns: 1, run: func(ctx context.Context, d *db.DB, f func()) error {
			db.AfterCommit(ctx, f)
			return nil
		}},
		{name: "runs at once on a detached context", wantRuns: 1, run: func(ctx context.Context, d *db.DB, f func()) error {
			return d.InTx(ctx, func(ctx context.Context) error {
				ran := false
				db.AfterCommit(db.WithoutTx(ctx), func() { ran = true; f() })
				if !ran {
					return errors.New("did not run at once")
				}
				return nil
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testkit.ForEachDriver(t, func(t *testing.T, driver string) {
				d := openDB(t, driver)
				ctx := context.Background()
				var runs []int64
				f := func() {
					// A fresh connection must already see what the
					// transaction wrote: the callback runs after COMMIT.
					var n int64
					if err := d.Conn(context.Background()).Model(&item{}).Count(&n).Error; err != nil {
						t.Errorf("count in callback: %v", err)
					}
					runs = append(runs, n)
				}
				require.NoError(t, tc.run(ctx, d, f))
				require.Len(t, runs, tc.wantRuns)
				if tc.wantRuns > 0 {
					assert.Equal(t, countItems(t, ctx, d), runs[0], "callback saw the committed rows")
				}
			})
		})
	}
}

func TestAfterCommitOrder(t *testing.T) {
	d := openDB(t, "sqlite")
	var got []int
	require.NoError(t, d.InTx(context.Background(), func(ctx context.Context) error {
		for i := range 5 {
			db.AfterCommit(ctx, func() { got = append(got, i) })
		}
		if len(got) != 0 {
			return errors.New("ran before commit")
		}
		return nil
	}))
	assert.Equal(t, []int{0, 1, 2, 3, 4}, got)
}

func TestWithoutTx(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
			if err := insertItem(ctx, d, "pending"); err != nil {
				return err
			}
			detached := db.WithoutTx(ctx)
			assert.False(t, db.InTransaction(detached))
			assert.True(t, db.InTransaction(ctx), "the original ctx keeps its transaction")
			var inTx, outside int64
			if err := d.Conn(ctx).Model(&item{}).Count(&inTx).Error; err != nil {
				return err
			}
			if err := d.Conn(detached).Model(&item{}).Count(&outside).Error; err != nil {
				return err
			}
			assert.Equal(t, int64(1), inTx, "the transaction sees its own row")
			assert.Equal(t, int64(0), outside, "the detached ctx does not see the uncommitted row")
			return nil
		}))
	})
}

func TestIsUniqueViolation(t *testing.T) {
	code := "C-1"
	tests := []struct {
		name string
		run  func(ctx context.Context, d *db.DB) error
		want bool
	}{
		{name: "duplicate primary key", want: true, run: func(ctx context.Context, d *db.DB) error {
			id := uuid.NewString()
			if err := d.Conn(ctx).Create(&item{ID: id, Name: "a"}).Error; err != nil {
				return err
			}
			return d.Conn(ctx).Create(&item{ID: id, Name: "b"}).Error
		}},
		{name: "duplicate unique index", want: true, run: func(ctx context.Context, d *db.DB) error {
			if err := d.Conn(ctx).Create(&item{ID: uuid.NewString(), Name: "a", Code: &code}).Error; err != nil {
				return err
			}
			return d.Conn(ctx).Create(&item{ID: uuid.NewString(), Name: "b", Code: &code}).Error
		}},
		{name: "duplicate inside InTx, wrapped", want: true, run: func(ctx context.Context, d *db.DB) error {
			return d.InTx(ctx, func(ctx context.Context) error {
				for range 2 {
					if err := d.Conn(ctx).Create(&item{ID: uuid.NewString(), Name: "a", Code: &code}).Error; err != nil {
						return fmt.Errorf("create item: %w", err)
					}
				}
				return nil
			})
		}},
		{name: "duplicate through raw SQL", want: true, run: func(ctx context.Context, d *db.DB) error {
			for range 2 {
				if err := d.Conn(ctx).Exec("INSERT INTO items (id, name, score, code) VALUES (?, 'a', 0, ?)", uuid.NewString(), code).Error; err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "not-null violation is not a duplicate", want: false, run: func(ctx context.Context, d *db.DB) error {
			return d.Conn(ctx).Exec("INSERT INTO items (id, name, score) VALUES (?, NULL, 0)", uuid.NewString()).Error
		}},
		{name: "foreign key violation is not a duplicate", want: false, run: func(ctx context.Context, d *db.DB) error {
			p := uuid.NewString()
			return d.Conn(ctx).Create(&item{ID: uuid.NewString(), Name: "a", ParentID: &p}).Error
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testkit.ForEachDriver(t, func(t *testing.T, driver string) {
				d := openDB(t, driver)
				err := tc.run(context.Background(), d)
				require.Error(t, err)
				assert.Equal(t, tc.want, db.IsUniqueViolation(err), "err: %v", err)
			})
		})
	}
	t.Run("nil and plain errors", func(t *testing.T) {
		assert.False(t, db.IsUniqueViolation(nil))
		assert.False(t, db.IsUniqueViolation(errors.New("duplicate key value")))
	})
}

func TestIsNotFound(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		var it item
		err := d.Conn(ctx).Where("id = ?", uuid.NewString()).First(&it).Error
		assert.True(t, db.IsNotFound(err), "First on no row: %v", err)
		assert.True(t, db.IsNotFound(fmt.Errorf("load item: %w", err)), "wrapped")

		var list []item
		err = d.Conn(ctx).Where("id = ?", uuid.NewString()).Find(&list).Error
		assert.NoError(t, err)
		assert.False(t, db.IsNotFound(err), "Find on no row is not an error")
		assert.False(t, db.IsNotFound(errors.New("other")))
	})
}

func TestPage(t *testing.T) {
	// id order is a..f; scores repeat so the id tiebreak shows.
	rows := []item{
		{ID: "a", Name: "alpha", Score: 2},
		{ID: "b", Name: "bravo", Score: 1},
		{ID: "c", Name: "charlie", Score: 2},
		{ID: "d", Name: "delta", Score: 1},
		{ID: "e", Name: "echo", Score: 3},
		{ID: "f", Name: "foxtrot", Score: 2},
	}
	spec := paging.Spec{Sort: map[string]string{"score": "score", "name": "name", "parentName": "p.name"}}
	tests := []struct {
		name  string
		query string // sort parameter
		page  int
		size  int
		join  bool
		want  []string
	}{
		{name: "no sort is id order", page: 1, size: 10, want: []string{"a", "b", "c", "d", "e", "f"}},
		{name: "ascending with id tiebreak", query: "score", page: 1, size: 10, want: []string{"b", "d", "a", "c", "f", "e"}},
		// The id tiebreak follows the last key's direction.
		{name: "descending with id tiebreak", query: "-score", page: 1, size: 10, want: []string{"e", "f", "c", "a", "d", "b"}},
		{name: "two keys", query: "score,-name", page: 1, size: 10, want: []string{"d", "b", "f", "c", "a", "e"}},
		{name: "first page", query: "-score", page: 1, size: 2, want: []string{"e", "f"}},
		{name: "second page", query: "-score", page: 2, size: 2, want: []string{"c", "a"}},
		{name: "last partial page", query: "-score", page: 2, size: 4, want: []string{"d", "b"}},
		{name: "page past the end", query: "-score", page: 4, size: 2, want: []string{}},
		{name: "joined query with qualified sort column", query: "-parentName", page: 1, size: 3, join: true,
			want: []string{"b", "d", "f"}},
		{name: "joined query with unqualified sort column", query: "-score", page: 1, size: 10, join: true,
			want: []string{"e", "f", "c", "a", "d", "b"}},
	}
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		require.NoError(t, d.Conn(ctx).Create(&[]parent{{ID: "p1", Name: "one"}, {ID: "p2", Name: "two"}}).Error)
		for i, r := range rows {
			p := "p1"
			if i%2 == 1 {
				p = "p2"
			}
			r.ParentID = &p
			require.NoError(t, d.Conn(ctx).Create(&r).Error)
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				req, err := paging.Parse(func(k string) string {
					switch k {
					case "sort":
						return tc.query
					case "page":
						return fmt.Sprint(tc.page)
					case "pageSize":
						return fmt.Sprint(tc.size)
					}
					return ""
				}, spec)
				require.NoError(t, err)
				// Both tables have id, score would be unambiguous but id is not.
				q := d.Conn(ctx).Model(&item{})
				if tc.join {
					q = d.Conn(ctx).Table("items").Select("items.*").Joins("JOIN parents p ON p.id = items.parent_id")
				}
				var got []item
				require.NoError(t, db.Page(q, req).Find(&got).Error)
				ids := []string{}
				for _, g := range got {
					ids = append(ids, g.ID)
				}
				assert.Equal(t, tc.want, ids)
			})
		}
	})
}

func TestPingAndClose(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		require.NoError(t, d.Ping(ctx))
		require.NoError(t, d.Close())
		assert.Error(t, d.Ping(ctx), "ping after close")
		var n int64
		assert.Error(t, d.Conn(ctx).Model(&item{}).Count(&n).Error, "read after close")
		assert.Error(t, insertItem(ctx, d, "late"), "write after close")
	})
}

// Under concurrent reads and writes no pool closes a connection for being
// idle one too many: each keeps every connection it opened.
func TestPoolsKeepTheirConnections(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				for j := range 20 {
					if j%5 == 0 {
						assert.NoError(t, insertItem(ctx, d, fmt.Sprintf("w%d-%d", i, j)))
						continue
					}
					var n int64
					assert.NoError(t, d.Conn(ctx).Model(&item{}).Where("name <> ?", "x").Count(&n).Error)
				}
			})
		}
		wg.Wait()
		main, readers := db.PoolStats(d)
		assert.Zero(t, main.MaxIdleClosed, "main pool closed idle connections")
		assert.Zero(t, readers.MaxIdleClosed, "reader pool closed idle connections")
		assert.Equal(t, main.OpenConnections, main.Idle)
		assert.Equal(t, readers.OpenConnections, readers.Idle)
		assert.LessOrEqual(t, readers.OpenConnections, 8)
		if driver == "sqlite" {
			assert.Equal(t, 1, main.MaxOpenConnections, "SQLite has one writer")
		}
	})
}

// Cached statements stay correct when one text runs nested in itself (in a
// transaction, on one connection: SQLite only, a Postgres connection runs one
// query at a time) and after the schema changes under them.
func TestCachedStatements(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		for _, n := range []string{"a", "b", "c"} {
			require.NoError(t, insertItem(ctx, d, n))
		}
		const q = "SELECT name FROM items WHERE name >= ? ORDER BY name"
		require.NoError(t, d.InTx(ctx, func(ctx context.Context) error {
			if driver != "sqlite" {
				return nil
			}
			rows, err := d.Conn(ctx).Raw(q, "a").Rows()
			if err != nil {
				return err
			}
			defer rows.Close()
			var outer []string
			for rows.Next() {
				var name string
				require.NoError(t, rows.Scan(&name))
				var inner []string
				require.NoError(t, d.Conn(ctx).Raw(q, name).Scan(&inner).Error)
				assert.Equal(t, map[string]int{"a": 3, "b": 2, "c": 1}[name], len(inner), "inner query from %s", name)
				outer = append(outer, name)
			}
			assert.Equal(t, []string{"a", "b", "c"}, outer)
			return rows.Err()
		}))

		const all = "SELECT * FROM parents ORDER BY id"
		require.NoError(t, d.Conn(ctx).Exec("INSERT INTO parents (id, name) VALUES ('p1', 'P')").Error)
		var before []map[string]any
		require.NoError(t, d.Conn(ctx).Raw(all).Scan(&before).Error)
		require.Len(t, before, 1)
		assert.Len(t, before[0], 2)
		require.NoError(t, d.Conn(ctx).Exec("ALTER TABLE parents ADD COLUMN note VARCHAR(20)").Error)
		var after []map[string]any
		err := d.Conn(ctx).Raw(all).Scan(&after).Error
		if driver == "postgres" && err != nil {
			// pgx answers Postgres's "cached plan must not change result
			// type" once on the connection that cached the statement, and
			// drops it from the cache: the next run prepares it afresh.
			assert.Contains(t, err.Error(), "0A000")
			err = d.Conn(ctx).Raw(all).Scan(&after).Error
		}
		require.NoError(t, err)
		require.Len(t, after, 1)
		assert.Contains(t, after[0], "note", "the cached statement sees the new column")
	})
}

// One node at a time runs exclusive work; the lock is free again once fn
// returns, even with an error; and fn runs outside any transaction, so a
// long seed or job does not hold back Postgres's vacuum horizon.
func TestExclusive(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		held := make(chan struct{})
		release := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- d.Serialized(ctx, "test.work", func(ctx context.Context) error {
				if db.InTransaction(ctx) {
					return errors.New("fn runs inside a transaction")
				}
				close(held)
				<-release
				return errors.New("failed")
			})
		}()
		<-held
		if driver == "postgres" {
			ran, err := d.RunExclusive(ctx, "test.work", func(context.Context) error { return nil })
			require.NoError(t, err)
			require.False(t, ran, "a second runner got the lock while the first held it")
			var states []string
			require.NoError(t, d.Conn(ctx).Raw(`SELECT a.state FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 7312 AND l.objsubid = 2
				AND l.objid::bigint = (hashtext(current_schema() || '/test.work')::bigint & 4294967295)`).Scan(&states).Error)
			require.Equal(t, []string{"idle"}, states, "the lock holder keeps a transaction open")
		}
		ran, err := d.RunExclusive(ctx, "test.other", func(context.Context) error { return nil })
		require.NoError(t, err)
		require.True(t, ran, "another name is not locked")
		close(release)
		require.EqualError(t, <-done, "failed")
		ran, err = d.RunExclusive(ctx, "test.work", func(context.Context) error { return nil })
		require.NoError(t, err)
		require.True(t, ran, "the lock was not released after fn failed")
	})
}

// The service's Postgres sessions run without parallel workers and JIT
// unless the DSN sets them, and AnalyzeAfterLoad leaves every table of the
// schema vacuumed and analysed (reltuples is -1 until a table is analysed);
// on SQLite it does nothing.
func TestPostgresSessionsAndAnalyzeAfterLoad(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openDB(t, driver)
		ctx := context.Background()
		require.NoError(t, insertItem(ctx, d, "a"))
		require.NoError(t, d.AnalyzeAfterLoad(ctx))
		if driver != "postgres" {
			return
		}
		var jit, workers string
		require.NoError(t, d.Conn(ctx).Raw(`SELECT current_setting('jit'), current_setting('max_parallel_workers_per_gather')`).Row().Scan(&jit, &workers))
		assert.Equal(t, []string{"off", "0"}, []string{jit, workers})
		var unanalysed int
		require.NoError(t, d.Conn(ctx).Raw(`SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.reltuples < 0`).Row().Scan(&unanalysed))
		assert.Zero(t, unanalysed)

		own, err := db.Open(db.Config{Driver: driver, DSN: testkit.WithSetting(testkit.FreshSchema(t), "jit", "on"), MaxOpenConns: 1})
		require.NoError(t, err)
		defer own.Close()
		require.NoError(t, own.Conn(ctx).Raw(`SELECT current_setting('jit')`).Row().Scan(&jit))
		assert.Equal(t, "on", jit, "a DSN's setting wins")
	})
}
