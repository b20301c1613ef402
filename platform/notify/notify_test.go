package notify_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/notify"
	"github.com/contractflow/contractflow/platform/testkit"
)

// recorder is a Receiver that remembers what it was given.
type recorder struct {
	mu      sync.Mutex
	items   []notify.Item
	resyncs int
}

func (r *recorder) Deliver(items []notify.Item) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, items...)
}

func (r *recorder) Resync() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resyncs++
}

func (r *recorder) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for _, it := range r.items {
		if it.Audience != "" {
			out = append(out, it.ID+"/@"+it.Audience+"-"+it.Except)
		}
		for _, u := range it.UserIDs {
			out = append(out, it.ID+"/"+u)
		}
	}
	slices.Sort(out)
	return out
}

func (r *recorder) resynced() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resyncs
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// node is one hub on a database, as one node of a deployment.
type node struct {
	db  *db.DB
	hub *notify.Hub
	rec *recorder
}

func startNode(t *testing.T, driver, dsn string) *node {
	t.Helper()
	d, err := db.Open(db.Config{Driver: driver, DSN: dsn, MaxOpenConns: 4})
	require.NoError(t, err)
	n := &node{db: d, hub: notify.New(notify.Config{DB: d, DSN: dsn, PingInterval: 200 * time.Millisecond}), rec: &recorder{}}
	require.NoError(t, n.hub.Start(context.Background(), n.rec))
	t.Cleanup(func() {
		n.hub.Stop()
		_ = d.Close()
	})
	return n
}

// items returns n messages for 1 to 300 users each (so that large ones
// span payloads), every third for an audience too, but one user, and the
// "id/user" and "id/@audience-except" pairs they make.
func items(n int) ([]notify.Item, []string) {
	var out []notify.Item
	var pairs []string
	for k := range n {
		it := notify.Item{ID: uuid.Must(uuid.NewV7()).String()}
		if k%3 == 0 {
			it.Audience, it.Except = fmt.Sprintf("%064x", k+1), uuid.NewString()
			pairs = append(pairs, it.ID+"/@"+it.Audience+"-"+it.Except)
		}
		for range (k*37)%300 + 1 {
			u := uuid.NewString()
			it.UserIDs = append(it.UserIDs, u)
			pairs = append(pairs, it.ID+"/"+u)
		}
		out = append(out, it)
	}
	slices.Sort(pairs)
	return out, pairs
}

// announce announces in a transaction that commits, or rolls back with
// rollback.
func (n *node) announce(t *testing.T, its []notify.Item, rollback bool) {
	t.Helper()
	errUndo := errors.New("undo")
	err := n.db.InTx(context.Background(), func(ctx context.Context) error {
		if err := n.hub.Announce(ctx, its); err != nil {
			return err
		}
		if rollback {
			return errUndo
		}
		return nil
	})
	if rollback {
		require.ErrorIs(t, err, errUndo)
	} else {
		require.NoError(t, err)
	}
}

func TestHub(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		dsn := filepath.Join(t.TempDir(), "cf.db")
		if driver == "postgres" {
			dsn = testkit.FreshSchema(t)
		}
		a := startNode(t, driver, dsn)
		nodes := []*node{a}
		if driver == "postgres" {
			nodes = append(nodes, startNode(t, driver, dsn))
		}

		t.Run("a rolled-back announcement reaches no one; a committed one reaches every node", func(t *testing.T) {
			undone, _ := items(3)
			a.announce(t, undone, true)
			// 30 messages for 1 to 300 users each need many NOTIFY
			// payloads, some split within a message: every pair arrives.
			its, want := items(30)
			a.announce(t, its, false)
			for i, n := range nodes {
				eventually(t, fmt.Sprintf("node %d to hear %d pairs", i, len(want)), func() bool { return len(n.rec.ids()) >= len(want) })
				require.Equal(t, want, n.rec.ids(), "node %d", i)
			}
		})

		if driver != "postgres" {
			return
		}
		b := nodes[1]
		t.Run("the listener reconnects after its connection is killed and asks for a resync", func(t *testing.T) {
			before := len(b.rec.ids())
			pid := b.hub.ListenerPID()
			require.NotZero(t, pid)
			var killed bool
			require.NoError(t, a.db.Conn(context.Background()).Raw("SELECT pg_terminate_backend(?)", pid).Scan(&killed).Error)
			require.True(t, killed)
			// Announced while b is away: b does not hear it, but resyncs.
			missed, _ := items(1)
			a.announce(t, missed, false)
			eventually(t, "a resync", func() bool { return b.rec.resynced() == 1 })
			eventually(t, "a new listener", func() bool { p := b.hub.ListenerPID(); return p != 0 && p != pid })
			later, _ := items(1)
			a.announce(t, later, false)
			eventually(t, "news after the reconnection", func() bool { return slices.Contains(b.rec.ids(), later[0].ID+"/"+later[0].UserIDs[0]) })
			require.LessOrEqual(t, len(b.rec.ids()), before+4) // at most the missed and the later message, each an audience and a user
		})
	})
}
