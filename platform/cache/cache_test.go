package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/cache"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/testkit"
)

// A load that read the old value and finishes after the change's drop must
// not store it: the next read loads again and sees the change.
func TestLoadRacingADropIsNotStored(t *testing.T) {
	t.Parallel()
	m := cache.New[string](nil, "race", 10)
	var value atomic.Value
	value.Store("old")
	read, release := make(chan struct{}), make(chan struct{})
	load := func(context.Context, []string) (map[string]string, error) {
		v := value.Load().(string)
		close(read)
		<-release
		return map[string]string{"k": v}, nil
	}
	done := make(chan map[string]string)
	go func() {
		got, err := m.Load(t.Context(), []string{"k"}, load)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	<-read
	value.Store("new") // the change commits …
	m.Drop("k")        // … and its after-commit hook drops the key
	close(release)
	if got := <-done; got["k"] != "old" {
		t.Fatalf("the racing load answered %q, want what it read (old)", got["k"])
	}
	got, err := m.Load(t.Context(), []string{"k"}, func(context.Context, []string) (map[string]string, error) {
		return map[string]string{"k": value.Load().(string)}, nil
	})
	if err != nil || got["k"] != "new" {
		t.Fatalf("read after the change: %v, %v; want new (the racing load must not have been stored)", got, err)
	}
}

// Many readers and writers at once (run with -race): once the writers stop,
// every key reads its last written value.
func TestConcurrentChangesLeaveNoStaleEntry(t *testing.T) {
	t.Parallel()
	m := cache.New[int](nil, "stress", 8)
	var mu sync.Mutex
	truth := map[string]int{}
	load := func(_ context.Context, keys []string) (map[string]int, error) {
		mu.Lock()
		out := make(map[string]int, len(keys))
		for _, k := range keys {
			out[k] = truth[k]
		}
		mu.Unlock()
		time.Sleep(time.Microsecond) // widen the window between read and store
		return out, nil
	}
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} // more than the cap: evictions too
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := m.Load(context.Background(), keys, load); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			for i := range 500 {
				k := keys[(i+w)%len(keys)]
				mu.Lock()
				truth[k]++
				mu.Unlock()
				m.Drop(k)
			}
		})
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	got, err := m.Load(context.Background(), keys, load)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if got[k] != truth[k] {
			t.Errorf("%s = %d after the writers stopped, want %d", k, got[k], truth[k])
		}
	}
	if m.Len() > 8 {
		t.Errorf("%d entries, want at most the cap of 8", m.Len())
	}
}

// openDB opens a fresh database of driver.
func openDB(t *testing.T, driver, dsn string) *db.DB {
	t.Helper()
	d, err := db.Open(db.Config{Driver: driver, DSN: dsn, MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// A change announced in a transaction drops the key on this node at commit
// and on another node sharing the database soon after; a rolled-back one
// drops nothing. Inside a transaction nothing loaded is stored; the keys
// are loaded again after the commit.
func TestChangedAcrossNodes(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		set := testkit.FreshDatabase(t, driver)
		dsn := set["database.dsn"].(string)
		nodes := 1
		if driver == "postgres" {
			nodes = 2
		}
		var maps []*cache.Map[string]
		var dbs []*db.DB
		for range nodes {
			d := openDB(t, driver, dsn)
			bus := cache.NewBus(cache.Config{DB: d, DSN: dsn})
			if err := bus.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(bus.Stop)
			waitFor(t, 5*time.Second, "the listener connects", bus.Live)
			dbs = append(dbs, d)
			maps = append(maps, cache.New[string](bus, "names", 100))
		}
		fill := func(v string) {
			for _, m := range maps {
				m.Store(gen(m, "k"), map[string]string{"k": v})
			}
		}
		cached := func(m *cache.Map[string]) bool { _, ok, _ := m.Get("k"); return ok }

		fill("v1")
		errRollback := errors.New("roll back")
		err := dbs[0].InTx(t.Context(), func(ctx context.Context) error {
			if err := maps[0].Changed(ctx, "k"); err != nil {
				return err
			}
			if !cached(maps[0]) {
				t.Error("dropped before the transaction ended")
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
		if driver == "postgres" {
			time.Sleep(200 * time.Millisecond) // what a delivered notification would take, many times over
		}
		for i, m := range maps {
			if !cached(m) {
				t.Errorf("node %d dropped the key of a rolled-back change", i)
			}
		}

		err = dbs[0].InTx(t.Context(), func(ctx context.Context) error {
			got, err := maps[0].Load(ctx, []string{"other"}, func(ctx context.Context, _ []string) (map[string]string, error) {
				if db.InTransaction(ctx) {
					return map[string]string{"other": "uncommitted"}, nil
				}
				return map[string]string{"other": "committed"}, nil
			})
			if err != nil || got["other"] != "uncommitted" {
				t.Errorf("load in a transaction: %v, %v", got, err)
			}
			return maps[0].Changed(ctx, "k")
		})
		if err != nil {
			t.Fatal(err)
		}
		if cached(maps[0]) {
			t.Error("this node still holds the key after the change committed")
		}
		// What the transaction read is never kept; the key is read again
		// after the commit, outside it, and that is kept.
		waitFor(t, 3*time.Second, "the key read again after the commit", func() bool {
			v, ok, _ := maps[0].Get("other")
			if ok && v != "committed" {
				t.Fatalf("a value loaded inside a transaction was stored: %q", v)
			}
			return ok
		})
		for i, m := range maps[1:] {
			waitFor(t, 3*time.Second, fmt.Sprintf("node %d drops the changed key", i+1), func() bool { return !cached(m) })
		}

		// No keys: the whole map, on every node.
		fill("v2")
		if err := maps[0].Changed(t.Context()); err != nil { // outside a transaction: at once
			t.Fatal(err)
		}
		for i, m := range maps {
			waitFor(t, 3*time.Second, fmt.Sprintf("node %d empties the map", i), func() bool { return m.Len() == 0 })
		}
	})
}

// While the listener is away a node answers nothing from memory, and once
// it is back it has forgotten everything cached before.
func TestListenerLossEmptiesAndBypasses(t *testing.T) {
	t.Parallel()
	if len(testkit.Drivers()) < 2 {
		t.Skip("Postgres only: set " + testkit.PostgresDSNEnv)
	}
	dsn := testkit.FreshSchema(t)
	d := openDB(t, "postgres", dsn)
	bus := cache.NewBus(cache.Config{DB: d, DSN: dsn, PingInterval: 50 * time.Millisecond})
	if err := bus.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Stop)
	waitFor(t, 5*time.Second, "the listener connects", bus.Live)
	m := cache.New[string](bus, "names", 10)
	m.Store(gen(m, "k"), map[string]string{"k": "v"})
	if _, ok, _ := m.Get("k"); !ok {
		t.Fatal("not cached while the listener is connected")
	}
	pid := bus.ListenerPID()
	time.Sleep(300 * time.Millisecond) // six ping intervals without news
	if !bus.Live() || bus.ListenerPID() != pid {
		t.Fatalf("the listener did not survive its pings: live %v, pid %d → %d", bus.Live(), pid, bus.ListenerPID())
	}
	if err := d.Conn(t.Context()).Exec("SELECT pg_terminate_backend(?)", pid).Error; err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the loss is noticed or the listener is back", func() bool {
		return !bus.Live() || bus.ListenerPID() != pid
	})
	if _, ok, _ := m.Get("k"); ok {
		t.Error("an entry cached before the listener was lost survived")
	}
	waitFor(t, 10*time.Second, "the listener reconnects", func() bool { return bus.Live() && bus.ListenerPID() != 0 })
	m.Store(gen(m, "k"), map[string]string{"k": "v2"})
	if v, ok, _ := m.Get("k"); !ok || v != "v2" {
		t.Errorf("after reconnecting: %q, %v; want the map usable again", v, ok)
	}
}

func gen(m *cache.Map[string], key string) uint64 { _, _, g := m.Get(key); return g }

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
