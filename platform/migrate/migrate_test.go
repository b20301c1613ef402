package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/testkit"
)

// freshDSN returns the driver's DSN of a new, empty database.
func freshDSN(t *testing.T, driver string) string {
	t.Helper()
	switch driver {
	case "sqlite":
		return filepath.Join(t.TempDir(), "cf.db")
	case "postgres":
		return testkit.FreshSchema(t)
	}
	t.Fatalf("unknown driver %q", driver)
	return ""
}

func open(t *testing.T, driver, dsn string) *db.DB {
	t.Helper()
	d, err := db.Open(db.Config{Driver: driver, DSN: dsn, MaxOpenConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func openFresh(t *testing.T, driver string) *db.DB {
	t.Helper()
	return open(t, driver, freshDSN(t, driver))
}

func hasTable(d *db.DB, name string) bool {
	return d.Conn(context.Background()).Migrator().HasTable(name)
}

func recordCount(t *testing.T, d *db.DB) int64 {
	t.Helper()
	var n int64
	require.NoError(t, d.Conn(context.Background()).Model(&migrate.Record{}).Count(&n).Error)
	return n
}

// trace records the order in which migrations run.
type trace struct {
	mu    sync.Mutex
	steps []string
}

func (tr *trace) step(name string, statements ...string) func(context.Context, *gorm.DB) error {
	return func(ctx context.Context, tx *gorm.DB) error {
		if !db.InTransaction(ctx) {
			return errors.New("migration ctx carries no transaction")
		}
		tr.mu.Lock()
		tr.steps = append(tr.steps, name)
		tr.mu.Unlock()
		return migrate.SQL(statements...)(ctx, tx)
	}
}

func (tr *trace) list() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.steps...)
}

func sampleSets(tr *trace) []migrate.Set {
	return []migrate.Set{
		{Module: "alpha", Migrations: []migrate.Migration{
			{Version: 1, Name: "create alpha", Up: tr.step("alpha 1", `CREATE TABLE alpha (id INTEGER PRIMARY KEY, name VARCHAR(20) NOT NULL)`)},
			{Version: 2, Name: "seed alpha", Up: tr.step("alpha 2", `INSERT INTO alpha (id, name) VALUES (1, 'one')`)},
		}},
		{Module: "beta", Migrations: []migrate.Migration{
			{Version: 1, Name: "create beta", Up: tr.step("beta 1", `CREATE TABLE beta (id INTEGER PRIMARY KEY, alpha_id INTEGER REFERENCES alpha (id))`)},
		}},
	}
}

type row struct {
	module  string
	version int
	applied bool
}

func rows(list []migrate.Status) []row {
	out := []row{}
	for _, s := range list {
		out = append(out, row{s.Module, s.Version, s.AppliedAt != nil})
	}
	return out
}

func TestUpAndList(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openFresh(t, driver)
		ctx := context.Background()
		tr := &trace{}
		sets := sampleSets(tr)

		steps := []struct {
			name        string
			run         func() ([]migrate.Status, error)
			want        []row
			wantSteps   []string
			wantRecords int64
		}{
			{name: "status before any run lists everything pending",
				run:  func() ([]migrate.Status, error) { return migrate.List(ctx, d, sets) },
				want: []row{{"alpha", 1, false}, {"alpha", 2, false}, {"beta", 1, false}}},
			{name: "first Up applies all in order",
				run:       func() ([]migrate.Status, error) { return migrate.Up(ctx, d, sets) },
				want:      []row{{"alpha", 1, true}, {"alpha", 2, true}, {"beta", 1, true}},
				wantSteps: []string{"alpha 1", "alpha 2", "beta 1"}, wantRecords: 3},
			{name: "second Up applies nothing",
				run:       func() ([]migrate.Status, error) { return migrate.Up(ctx, d, sets) },
				want:      []row{},
				wantSteps: []string{"alpha 1", "alpha 2", "beta 1"}, wantRecords: 3},
			{name: "status after lists everything applied",
				run:       func() ([]migrate.Status, error) { return migrate.List(ctx, d, sets) },
				want:      []row{{"alpha", 1, true}, {"alpha", 2, true}, {"beta", 1, true}},
				wantSteps: []string{"alpha 1", "alpha 2", "beta 1"}, wantRecords: 3},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				got, err := st.run()
				require.NoError(t, err)
				assert.Equal(t, st.want, rows(got))
				assert.Equal(t, st.wantSteps, tr.list())
				if st.wantRecords > 0 {
					assert.Equal(t, st.wantRecords, recordCount(t, d))
				}
				for _, s := range got {
					if s.AppliedAt != nil {
						assert.WithinDuration(t, time.Now(), *s.AppliedAt, time.Minute)
					}
				}
			})
		}

		var recs []migrate.Record
		require.NoError(t, d.Conn(ctx).Order("module, version").Find(&recs).Error)
		require.Len(t, recs, 3)
		assert.Equal(t, "create alpha", recs[0].Name)
		assert.Equal(t, "beta", recs[2].Module)
		var name string
		require.NoError(t, d.Conn(ctx).Raw("SELECT name FROM alpha WHERE id = 1").Scan(&name).Error)
		assert.Equal(t, "one", name)
	})
}

func TestUpAppliesOnlyNewMigrations(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openFresh(t, driver)
		ctx := context.Background()
		tr := &trace{}
		full := sampleSets(tr)
		// An older binary knew only alpha's first migration.
		old := []migrate.Set{{Module: "alpha", Migrations: full[0].Migrations[:1]}}
		applied, err := migrate.Up(ctx, d, old)
		require.NoError(t, err)
		assert.Equal(t, []row{{"alpha", 1, true}}, rows(applied))

		list, err := migrate.List(ctx, d, full)
		require.NoError(t, err)
		assert.Equal(t, []row{{"alpha", 1, true}, {"alpha", 2, false}, {"beta", 1, false}}, rows(list))

		applied, err = migrate.Up(ctx, d, full)
		require.NoError(t, err)
		assert.Equal(t, []row{{"alpha", 2, true}, {"beta", 1, true}}, rows(applied))
		assert.Equal(t, []string{"alpha 1", "alpha 2", "beta 1"}, tr.list())
	})
}

func TestFailingMigrationRollsBackTheRun(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		failing func(context.Context, *gorm.DB) error
		wantErr string
	}{
		{name: "Up returns an error", failing: func(context.Context, *gorm.DB) error { return errBoom }, wantErr: "boom"},
		{name: "invalid SQL", failing: migrate.SQL(`CREATE TABLE gamma (id INTEGER PRIMARY KEY)`, `THIS IS NOT SQL`), wantErr: "gamma"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testkit.ForEachDriver(t, func(t *testing.T, driver string) {
				d := openFresh(t, driver)
				ctx := context.Background()
				// A first, successful run stays applied.
				first := []migrate.Set{{Module: "alpha", Migrations: []migrate.Migration{
					{Version: 1, Name: "create alpha", Up: migrate.SQL(`CREATE TABLE alpha (id INTEGER PRIMARY KEY)`)},
				}}}
				_, err := migrate.Up(ctx, d, first)
				require.NoError(t, err)

				second := []migrate.Set{
					{Module: "alpha", Migrations: append(first[0].Migrations,
						migrate.Migration{Version: 2, Name: "alter alpha", Up: migrate.SQL(
							`CREATE TABLE alpha_extra (id INTEGER PRIMARY KEY)`,
							`INSERT INTO alpha (id) VALUES (7)`,
						)})},
					{Module: "gamma", Migrations: []migrate.Migration{
						{Version: 1, Name: "create gamma", Up: migrate.SQL(`CREATE TABLE gamma_pre (id INTEGER PRIMARY KEY)`)},
						{Version: 2, Name: "break", Up: tc.failing},
					}},
				}
				applied, err := migrate.Up(ctx, d, second)
				require.Error(t, err)
				assert.Nil(t, applied)
				assert.Contains(t, err.Error(), "gamma 0002 break")
				if tc.wantErr == "boom" {
					assert.ErrorIs(t, err, errBoom)
				}

				assert.Equal(t, int64(1), recordCount(t, d), "only the first run stays recorded")
				for _, table := range []string{"alpha_extra", "gamma_pre", "gamma"} {
					assert.False(t, hasTable(d, table), "DDL of the failed run is rolled back: %s", table)
				}
				assert.True(t, hasTable(d, "alpha"))
				var n int64
				require.NoError(t, d.Conn(ctx).Table("alpha").Count(&n).Error)
				assert.Zero(t, n, "data written by the failed run is rolled back")

				list, err := migrate.List(ctx, d, second)
				require.NoError(t, err)
				assert.Equal(t, []row{{"alpha", 1, true}, {"alpha", 2, false}, {"gamma", 1, false}, {"gamma", 2, false}}, rows(list))
			})
		})
	}
}

func TestFailingFirstRunLeavesNoTable(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openFresh(t, driver)
		sets := []migrate.Set{{Module: "alpha", Migrations: []migrate.Migration{
			{Version: 1, Name: "create", Up: migrate.SQL(`CREATE TABLE alpha (id INTEGER PRIMARY KEY)`)},
			{Version: 2, Name: "fail", Up: func(context.Context, *gorm.DB) error { return errors.New("no") }},
		}}}
		_, err := migrate.Up(context.Background(), d, sets)
		require.Error(t, err)
		assert.False(t, hasTable(d, "alpha"))
		assert.False(t, hasTable(d, "schema_migrations"), "even the bookkeeping table is part of the run")
	})
}

func TestUpRejectsMalformedSets(t *testing.T) {
	noop := func(context.Context, *gorm.DB) error { return nil }
	tests := []struct {
		name string
		sets []migrate.Set
		want string
	}{
		{name: "starts at 0", sets: []migrate.Set{{Module: "a", Migrations: []migrate.Migration{
			{Version: 0, Name: "zero", Up: noop}}}}, want: "version 0, want 1"},
		{name: "starts at 2", sets: []migrate.Set{{Module: "a", Migrations: []migrate.Migration{
			{Version: 2, Name: "two", Up: noop}}}}, want: "version 2, want 1"},
		{name: "gap", sets: []migrate.Set{{Module: "a", Migrations: []migrate.Migration{
			{Version: 1, Name: "one", Up: noop}, {Version: 3, Name: "three", Up: noop}}}}, want: "version 3, want 2"},
		{name: "repeated version", sets: []migrate.Set{{Module: "a", Migrations: []migrate.Migration{
			{Version: 1, Name: "one", Up: noop}, {Version: 1, Name: "again", Up: noop}}}}, want: "version 1, want 2"},
		{name: "out of order", sets: []migrate.Set{{Module: "a", Migrations: []migrate.Migration{
			{Version: 2, Name: "two", Up: noop}, {Version: 1, Name: "one", Up: noop}}}}, want: "want 1"},
		{name: "missing name", sets: []migrate.Set{{Module: "a", Migrations: []migrate.Migration{
			{Version: 1, Up: noop}}}}, want: "needs a name and an Up"},
		{name: "missing Up", sets: []migrate.Set{{Module: "a", Migrations: []migrate.Migration{
			{Version: 1, Name: "one"}}}}, want: "needs a name and an Up"},
		{name: "module listed twice", sets: []migrate.Set{
			{Module: "a", Migrations: []migrate.Migration{{Version: 1, Name: "one", Up: noop}}},
			{Module: "a", Migrations: []migrate.Migration{{Version: 1, Name: "one", Up: noop}}}}, want: "module a listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := openFresh(t, "sqlite")
			_, err := migrate.Up(context.Background(), d, tc.sets)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.False(t, hasTable(d, "schema_migrations"), "nothing touched the database")
		})
	}
}

func TestConcurrentUp(t *testing.T) {
	const nodes = 4
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		dsn := freshDSN(t, driver)
		var runs [3]atomic.Int64
		counted := func(i int, stmt string) func(context.Context, *gorm.DB) error {
			return func(ctx context.Context, tx *gorm.DB) error {
				runs[i].Add(1)
				time.Sleep(20 * time.Millisecond) // widen the race window
				return migrate.SQL(stmt)(ctx, tx)
			}
		}
		sets := []migrate.Set{
			{Module: "alpha", Migrations: []migrate.Migration{
				{Version: 1, Name: "create alpha", Up: counted(0, `CREATE TABLE alpha (id INTEGER PRIMARY KEY)`)},
				{Version: 2, Name: "fill alpha", Up: counted(1, `INSERT INTO alpha (id) VALUES (1)`)},
			}},
			{Module: "beta", Migrations: []migrate.Migration{
				{Version: 1, Name: "create beta", Up: counted(2, `CREATE TABLE beta (id INTEGER PRIMARY KEY)`)},
			}},
		}
		// Each node opens its own handle, as separate processes would.
		handles := make([]*db.DB, nodes)
		for i := range handles {
			handles[i] = open(t, driver, dsn)
		}
		var (
			wg    sync.WaitGroup
			total atomic.Int64
			errs  = make(chan error, nodes)
			start = make(chan struct{})
		)
		for i, h := range handles {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				applied, err := migrate.Up(context.Background(), h, sets)
				if err != nil {
					errs <- fmt.Errorf("node %d: %w", i, err)
					return
				}
				total.Add(int64(len(applied)))
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		assert.Equal(t, int64(3), total.Load(), "the nodes applied three migrations between them")
		for i := range runs {
			assert.Equal(t, int64(1), runs[i].Load(), "migration %d ran exactly once", i)
		}
		assert.Equal(t, int64(3), recordCount(t, handles[0]))
		var n int64
		require.NoError(t, handles[0].Conn(context.Background()).Table("alpha").Count(&n).Error)
		assert.Equal(t, int64(1), n)
	})
}

func TestPerDialect(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		d := openFresh(t, driver)
		sets := []migrate.Set{{Module: "alpha", Migrations: []migrate.Migration{
			{Version: 1, Name: "engine specific", Up: migrate.PerDialect(
				[]string{`CREATE TABLE only_sqlite (id INTEGER PRIMARY KEY AUTOINCREMENT)`, `CREATE INDEX ix_only_sqlite ON only_sqlite (id)`},
				[]string{`CREATE TABLE only_postgres (id BIGSERIAL PRIMARY KEY)`, `CREATE INDEX ix_only_postgres ON only_postgres (id)`},
			)},
		}}}
		_, err := migrate.Up(context.Background(), d, sets)
		require.NoError(t, err)
		tests := []struct {
			table string
			want  bool
		}{
			{"only_sqlite", driver == "sqlite"},
			{"only_postgres", driver == "postgres"},
		}
		for _, tc := range tests {
			t.Run(tc.table, func(t *testing.T) {
				assert.Equal(t, tc.want, hasTable(d, tc.table))
			})
		}
	})
}
