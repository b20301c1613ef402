package events_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/testkit"
)

type contractMoved struct{ ID string }

func (contractMoved) Topic() string { return "contract.moved" }

type otherHappened struct{}

func (otherHappened) Topic() string { return "other.happened" }

type note struct {
	ID   string
	Text string
}

func (note) TableName() string { return "notes" }

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newBus() (*events.Bus, *syncBuffer) {
	buf := &syncBuffer{}
	return events.NewBus(slog.New(slog.NewTextHandler(buf, nil))), buf
}

func openDB(t *testing.T, driver string) *db.DB {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "cf.db")
	if driver == "postgres" {
		dsn = testkit.FreshSchema(t)
	}
	d, err := db.Open(db.Config{Driver: driver, DSN: dsn, MaxOpenConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	require.NoError(t, d.Conn(context.Background()).Exec(`CREATE TABLE notes (id VARCHAR(36) PRIMARY KEY, text VARCHAR(100) NOT NULL)`).Error)
	return d
}

func addNote(ctx context.Context, d *db.DB, text string) error {
	return d.Conn(ctx).Create(&note{ID: uuid.NewString(), Text: text}).Error
}

func notes(t *testing.T, d *db.DB) []string {
	t.Helper()
	var list []note
	require.NoError(t, d.Conn(context.Background()).Order("text").Find(&list).Error)
	out := []string{}
	for _, n := range list {
		out = append(out, n.Text)
	}
	return out
}

func TestInTxHandlers(t *testing.T) {
	errVeto := errors.New("budget exceeded")
	tests := []struct {
		name       string
		handlers   []string // "ok" writes a note, "veto" writes a note then fails
		wantErr    error
		wantNotes  []string
		wantCalled []string
	}{
		{name: "handler writes join the publisher's transaction", handlers: []string{"ok"},
			wantNotes: []string{"handler 0", "publisher"}, wantCalled: []string{"0"}},
		{name: "handler error aborts Publish and rolls back", handlers: []string{"veto"}, wantErr: errVeto,
			wantNotes: []string{}, wantCalled: []string{"0"}},
		{name: "later handlers do not run after an error", handlers: []string{"ok", "veto", "ok"}, wantErr: errVeto,
			wantNotes: []string{}, wantCalled: []string{"0", "1"}},
		{name: "several handlers all commit", handlers: []string{"ok", "ok"},
			wantNotes: []string{"handler 0", "handler 1", "publisher"}, wantCalled: []string{"0", "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testkit.ForEachDriver(t, func(t *testing.T, driver string) {
				d := openDB(t, driver)
				bus, _ := newBus()
				var called []string
				for i, kind := range tc.handlers {
					bus.Subscribe("contract.moved", events.InTx, func(ctx context.Context, e events.Event) error {
						called = append(called, fmt.Sprint(i))
						if !db.InTransaction(ctx) {
							return errors.New("InTx handler got no transaction")
						}
						// The handler sees the publisher's uncommitted row.
						var n int64
						if err := d.Conn(ctx).Model(&note{}).Where("text = ?", "publisher").Count(&n).Error; err != nil {
							return err
						}
						if n != 1 {
							return fmt.Errorf("handler sees %d publisher rows, want 1", n)
						}
						if err := addNote(ctx, d, fmt.Sprintf("handler %d", i)); err != nil {
							return err
						}
						if kind == "veto" {
							return errVeto
						}
						return nil
					})
				}
				err := d.InTx(context.Background(), func(ctx context.Context) error {
					if err := addNote(ctx, d, "publisher"); err != nil {
						return err
					}
					return bus.Publish(ctx, contractMoved{ID: "c1"})
				})
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, tc.wantNotes, notes(t, d))
				assert.Equal(t, tc.wantCalled, called)
			})
		})
	}
}

type ctxKey struct{}

func TestAfterCommitHandlers(t *testing.T) {
	errPublisher := errors.New("publisher failed")
	tests := []struct {
		name        string
		inTx        bool
		publishErr  error // the publisher's transaction fails after publishing
		handlerErr  error
		wantRuns    int
		wantNotes   []string
		wantLogged  bool
		wantOuterOK bool
	}{
		{name: "runs after commit", inTx: true, wantRuns: 1,
			wantNotes: []string{"after commit", "publisher"}, wantOuterOK: true},
		{name: "never runs when the transaction rolls back", inTx: true, publishErr: errPublisher, wantRuns: 0,
			wantNotes: []string{}},
		{name: "error is only logged", inTx: true, handlerErr: errors.New("mail server down"), wantRuns: 1,
			wantNotes: []string{"after commit", "publisher"}, wantLogged: true, wantOuterOK: true},
		{name: "runs at once without a transaction", inTx: false, wantRuns: 1,
			wantNotes: []string{"after commit", "publisher"}, wantOuterOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testkit.ForEachDriver(t, func(t *testing.T, driver string) {
				d := openDB(t, driver)
				bus, logs := newBus()
				published := false
				runs := 0
				bus.Subscribe("contract.moved", events.AfterCommit, func(ctx context.Context, e events.Event) error {
					runs++
					if tc.inTx && !published {
						t.Error("after-commit handler ran during Publish")
					}
					if db.InTransaction(ctx) {
						t.Error("after-commit handler ctx carries a transaction")
					}
					if _, ok := ctx.Deadline(); ok {
						t.Error("after-commit handler ctx keeps the publisher's deadline")
					}
					if v, _ := ctx.Value(ctxKey{}).(string); v != "request-1" {
						t.Errorf("after-commit handler lost ctx values: %q", v)
					}
					if got := e.(contractMoved).ID; got != "c1" {
						t.Errorf("event ID %q", got)
					}
					// The publisher's row is committed and visible; the
					// handler may open its own transaction.
					var n int64
					if err := d.Conn(ctx).Model(&note{}).Where("text = ?", "publisher").Count(&n).Error; err != nil || n != 1 {
						t.Errorf("publisher row count %d, err %v", n, err)
					}
					if err := d.InTx(ctx, func(ctx context.Context) error { return addNote(ctx, d, "after commit") }); err != nil {
						t.Errorf("write in after-commit handler: %v", err)
					}
					return tc.handlerErr
				})

				ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "request-1"), time.Hour)
				defer cancel()
				var err error
				if tc.inTx {
					err = d.InTx(ctx, func(ctx context.Context) error {
						if err := addNote(ctx, d, "publisher"); err != nil {
							return err
						}
						if err := bus.Publish(ctx, contractMoved{ID: "c1"}); err != nil {
							return err
						}
						published = true
						return tc.publishErr
					})
				} else {
					if err = addNote(ctx, d, "publisher"); err == nil {
						err = bus.Publish(ctx, contractMoved{ID: "c1"})
					}
				}
				if tc.wantOuterOK {
					require.NoError(t, err, "a failing after-commit handler never fails the publisher")
				} else {
					require.ErrorIs(t, err, tc.publishErr)
				}
				assert.Equal(t, tc.wantRuns, runs)
				assert.Equal(t, tc.wantNotes, notes(t, d))
				if tc.wantLogged {
					assert.Contains(t, logs.String(), "event handler failed")
					assert.Contains(t, logs.String(), "contract.moved")
					assert.Contains(t, logs.String(), "mail server down")
				} else {
					assert.NotContains(t, logs.String(), "event handler failed")
				}
			})
		})
	}
}

func TestHandlerOrder(t *testing.T) {
	d := openDB(t, "sqlite")
	bus, _ := newBus()
	var got []string
	sub := func(topic string, mode events.Mode, name string) {
		bus.Subscribe(topic, mode, func(context.Context, events.Event) error {
			got = append(got, name)
			return nil
		})
	}
	// Interleaved subscriptions: InTx handlers still all run, in order,
	// during Publish; after-commit ones follow the commit, in order.
	sub("contract.moved", events.AfterCommit, "after 1")
	sub("contract.moved", events.InTx, "tx 1")
	sub("other.happened", events.InTx, "other topic")
	sub("contract.moved", events.AfterCommit, "after 2")
	sub("contract.moved", events.InTx, "tx 2")
	sub("contract.moved", events.InTx, "tx 3")

	tests := []struct {
		name string
		run  func() error
		want []string
	}{
		{name: "inside a transaction", want: []string{"tx 1", "tx 2", "tx 3", "published", "after 1", "after 2"},
			run: func() error {
				return d.InTx(context.Background(), func(ctx context.Context) error {
					if err := bus.Publish(ctx, contractMoved{ID: "c1"}); err != nil {
						return err
					}
					got = append(got, "published")
					return nil
				})
			}},
		{name: "without a transaction", want: []string{"tx 1", "tx 2", "tx 3", "after 1", "after 2"},
			run: func() error { return bus.Publish(context.Background(), contractMoved{ID: "c1"}) }},
		{name: "topic without subscribers", want: nil,
			run: func() error { return bus.Publish(context.Background(), unheard{}) }},
		{name: "only its own topic", want: []string{"other topic"},
			run: func() error { return bus.Publish(context.Background(), otherHappened{}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			require.NoError(t, tc.run())
			assert.Equal(t, tc.want, got)
		})
	}
}

type unheard struct{}

func (unheard) Topic() string { return "nobody.listens" }

func TestConcurrentSubscribeAndPublish(t *testing.T) {
	bus, _ := newBus()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		calls int
	)
	for range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			bus.Subscribe("contract.moved", events.InTx, func(context.Context, events.Event) error {
				mu.Lock()
				calls++
				mu.Unlock()
				return nil
			})
		}()
		go func() {
			defer wg.Done()
			assert.NoError(t, bus.Publish(context.Background(), contractMoved{ID: "c"}))
		}()
	}
	wg.Wait()
	calls = 0
	require.NoError(t, bus.Publish(context.Background(), contractMoved{ID: "c"}))
	assert.Equal(t, 8, calls)
}

// SubscribeAll hears every topic, after the topic's own subscribers of the
// same mode, and its InTx error vetoes the publisher's change like theirs.
func TestSubscribeAll(t *testing.T) {
	bus, _ := newBus()
	var order []string
	bus.SubscribeAll(events.InTx, func(_ context.Context, e events.Event) error {
		order = append(order, "all:"+e.Topic())
		if _, ok := e.(otherHappened); ok {
			return errors.New("refused")
		}
		return nil
	})
	bus.Subscribe("contract.moved", events.InTx, func(_ context.Context, e events.Event) error {
		order = append(order, "own:"+e.Topic())
		return nil
	})
	bus.SubscribeAll(events.AfterCommit, func(_ context.Context, e events.Event) error {
		order = append(order, "after:"+e.Topic())
		return nil
	})
	require.NoError(t, bus.Publish(context.Background(), contractMoved{ID: "c1"}))
	require.Error(t, bus.Publish(context.Background(), otherHappened{}))
	assert.Equal(t, []string{"own:contract.moved", "all:contract.moved", "after:contract.moved", "all:other.happened"}, order)
}
