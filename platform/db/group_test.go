package db_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/db"
)

// Transactions that queue behind a busy SQLite writer commit together
// (group.go), but each stays all or nothing: of one group, a member that
// fails, panics or whose caller gives up leaves no row and runs no
// AfterCommit, and the others commit. (Postgres groups nothing.)
func TestGroupedTransactionsStayAllOrNothing(t *testing.T) {
	d := openDB(t, "sqlite")
	ctx := context.Background()
	release := holdWriter(t, d)
	const members = 40
	type outcome struct {
		err       error
		panicked  any
		committed bool
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes = map[string]*outcome{}
	)
	for i := range members {
		name := fmt.Sprintf("m%02d", i)
		o := &outcome{}
		outcomes[name] = o
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					mu.Lock()
					o.panicked = p
					mu.Unlock()
				}
			}()
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			err := d.InTx(ctx, func(ctx context.Context) error {
				if err := insertItem(ctx, d, name); err != nil {
					return err
				}
				db.AfterCommit(ctx, func() {
					mu.Lock()
					o.committed = true
					mu.Unlock()
				})
				switch i % 4 {
				case 1:
					return errors.New("refused " + name)
				case 2:
					panic("panicked " + name)
				case 3:
					cancel() // the caller gives up while its transaction runs
				}
				return nil
			})
			mu.Lock()
			o.err = err
			mu.Unlock()
		})
	}
	waitFor(t, func() bool { return db.Queued(d) == members })
	require.NoError(t, release())
	wg.Wait()

	var names []string
	require.NoError(t, d.Conn(ctx).Model(&item{}).Order("name").Pluck("name", &names).Error)
	want := []string{"first"}
	for i := range members {
		name := fmt.Sprintf("m%02d", i)
		o := outcomes[name]
		switch i % 4 {
		case 0:
			want = append(want, name)
			assert.NoError(t, o.err, name)
			assert.True(t, o.committed, "%s: AfterCommit did not run", name)
		case 1:
			assert.EqualError(t, o.err, "refused "+name)
		case 2:
			assert.Equal(t, "panicked "+name, o.panicked, "%s: the panic did not reach its caller", name)
		case 3:
			assert.ErrorIs(t, o.err, context.Canceled, name)
		}
		if i%4 != 0 {
			assert.False(t, o.committed, "%s: AfterCommit ran for a transaction that did not commit", name)
		}
	}
	assert.Equal(t, want, names)
}

// A member reads the writes of the members before it in its group, as it
// would have after their commits; a unique key taken by an earlier member is
// a conflict for a later one, not a lost write.
func TestGroupMembersSeeTheWritesBeforeThem(t *testing.T) {
	d := openDB(t, "sqlite")
	ctx := context.Background()
	release := holdWriter(t, d)
	code := "X-001"
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			errs <- d.InTx(ctx, func(ctx context.Context) error {
				return d.Conn(ctx).Create(&item{ID: uuid.NewString(), Name: "coded", Code: &code}).Error
			})
		}()
	}
	waitFor(t, func() bool { return db.Queued(d) == 2 })
	require.NoError(t, release())
	a, b := <-errs, <-errs
	assert.True(t, (a == nil) != (b == nil), "exactly one of two inserts of one code must win: %v, %v", a, b)
	assert.True(t, db.IsUniqueViolation(errors.Join(a, b)), "the loser sees a unique violation: %v %v", a, b)
	assert.Equal(t, int64(2), countItems(t, ctx, d), "first and the winner")
}

// InTx after Close fails instead of waiting for a writer that is gone.
func TestInTxAfterClose(t *testing.T) {
	d := openDB(t, "sqlite")
	require.NoError(t, d.Close())
	err := d.InTx(context.Background(), func(context.Context) error { return nil })
	require.Error(t, err)
}

// holdWriter starts a transaction that writes the item "first" and then
// waits; on SQLite the transactions begun meanwhile queue behind it. The
// function it returns lets it commit and returns its outcome; the test's
// end does so too, should the test stop first.
func holdWriter(t *testing.T, d *db.DB) func() error {
	t.Helper()
	var (
		release = make(chan struct{})
		began   = make(chan struct{})
		result  = make(chan error, 1)
		once    sync.Once
	)
	go func() {
		result <- d.InTx(context.Background(), func(ctx context.Context) error {
			close(began)
			if err := insertItem(ctx, d, "first"); err != nil {
				return err
			}
			<-release
			return nil
		})
	}()
	stop := func() error {
		once.Do(func() { close(release) })
		return <-result
	}
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	<-began
	return stop
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
