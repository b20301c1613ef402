// Package cache keeps small read-mostly tables (user names, role holders,
// supplier and project references) in memory without ever answering from a
// change that has been superseded.
//
// A Map is filled on a miss and emptied by the changes that affect it: the
// code that changes a row calls Map.Changed inside its transaction. On this
// node the keys are dropped once the transaction commits (db.AfterCommit);
// other nodes hear of it through the Bus (pg_notify sent in the transaction,
// which Postgres delivers on commit only). Every drop bumps a generation, and
// a load only stores its result when no drop happened while it ran, so a
// value read before a change can never outlive the change. A load made
// inside a transaction is never stored (it may see that transaction's own
// uncommitted writes); its keys are loaded again after the commit.
package cache

import (
	"context"
	"sync"

	"github.com/contractflow/contractflow/platform/db"
)

// Map caches values by string key, at most max of them; when full, a store
// evicts arbitrary entries (the tables behind these maps are small, so the
// cap is a guard against growth rather than a working-set policy).
type Map[V any] struct {
	name string
	bus  *Bus
	max  int

	mu  sync.RWMutex
	m   map[string]V
	gen uint64
}

// New returns an empty map named name (the Bus's name for it; unique per
// process) holding at most max entries. bus may be nil for a map that only
// this node changes (tests).
func New[V any](bus *Bus, name string, max int) *Map[V] {
	c := &Map[V]{name: name, bus: bus, max: max, m: map[string]V{}}
	if bus != nil {
		bus.register(name, c)
	}
	return c
}

// usable reports whether the map may answer: on Postgres only while the
// Bus hears other nodes' changes.
func (c *Map[V]) usable() bool { return c.bus == nil || c.bus.Live() }

// Get returns the value of key when cached, and the generation a load of it
// must present to Store.
func (c *Map[V]) Get(key string) (V, bool, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.usable() {
		var zero V
		return zero, false, c.gen
	}
	v, ok := c.m[key]
	return v, ok, c.gen
}

// Store caches entries loaded since Get returned gen, unless something was
// dropped meanwhile.
func (c *Map[V]) Store(gen uint64, entries map[string]V) {
	if len(entries) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || !c.usable() {
		return
	}
	for k, v := range entries {
		if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
			for old := range c.m { // map order is arbitrary: a random eviction
				delete(c.m, old)
				break
			}
		}
		c.m[k] = v
	}
}

// Load returns the values of keys, loading the missing ones with load (one
// call for all of them). load returns the entries to cache: a key it leaves
// out is not cached and not returned.
func (c *Map[V]) Load(ctx context.Context, keys []string, load func(ctx context.Context, missing []string) (map[string]V, error)) (map[string]V, error) {
	out := make(map[string]V, len(keys))
	var missing []string
	c.mu.RLock()
	gen, usable := c.gen, c.usable()
	for _, k := range keys {
		if v, ok := c.m[k]; ok && usable {
			out[k] = v
		} else {
			missing = append(missing, k)
		}
	}
	c.mu.RUnlock()
	if len(missing) == 0 {
		return out, nil
	}
	got, err := load(ctx, missing)
	if err != nil {
		return nil, err
	}
	for k, v := range got {
		out[k] = v
	}
	if !db.InTransaction(ctx) {
		c.Store(gen, got)
	} else if usable {
		// The keys are read again once the transaction commits, outside it,
		// and kept then, so that the next transaction finds them: on
		// Postgres every contract move reads the role holders inside its
		// transaction, and without this they were never cached.
		db.AfterCommit(ctx, func() {
			go func() { _, _ = c.Load(db.WithoutTx(context.WithoutCancel(ctx)), missing, load) }()
		})
	}
	return out, nil
}

// Drop forgets keys on this node; no keys forgets everything.
func (c *Map[V]) Drop(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(keys) == 0 {
		clear(c.m)
	}
	for _, k := range keys {
		delete(c.m, k)
	}
	c.gen++
}

// Len is the number of cached entries.
func (c *Map[V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// Changed records, inside the transaction in ctx, that the values of keys
// (of every key when none is given) change: this node drops them once the
// transaction commits, and every other node once Postgres delivers the
// notification, which it does on commit only. A rolled-back change drops
// nothing anywhere.
func (c *Map[V]) Changed(ctx context.Context, keys ...string) error {
	keys = append([]string(nil), keys...)
	if c.bus != nil {
		if err := c.bus.announce(ctx, c.name, keys); err != nil {
			return err
		}
	}
	db.AfterCommit(ctx, func() { c.Drop(keys...) })
	return nil
}

// dropper is what the Bus needs of a Map.
type dropper interface{ Drop(keys ...string) }
