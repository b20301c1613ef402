package ratelimit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/plugin/dbresolver"

	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/scheduler"
)

// Store counts hits per bucket and window.
type Store interface {
	// Hit adds one hit to key's counter for the window starting at window and
	// returns the count including this hit. Concurrent hits must each see a
	// distinct count, so exactly the limit is admitted.
	Hit(ctx context.Context, key string, window time.Time) (int, error)
}

// MemoryStore keeps the counters of one process. It suits a single node; nodes
// sharing a database need SharedStore, or each would admit the full limit.
type MemoryStore struct {
	mu      sync.Mutex
	windows map[int64]map[string]int // window start (unix seconds) → bucket → hits
	latest  int64
}

// NewMemoryStore returns an empty in-process store. It keeps only the newest
// window and the one before it, so memory stays bounded by the number of
// clients seen in about two minutes.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{windows: map[int64]map[string]int{}}
}

// Hit implements Store.
func (s *MemoryStore) Hit(_ context.Context, key string, window time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buckets := windowOf(s.windows, &s.latest, window.Unix())
	buckets[key]++
	return buckets[key], nil
}

// windowOf returns the buckets of window w, dropping every window older than
// the one before the newest.
func windowOf[V any](windows map[int64]map[string]V, latest *int64, w int64) map[string]V {
	if w > *latest {
		for start := range windows {
			if start != *latest {
				delete(windows, start)
			}
		}
		*latest = w
	}
	buckets := windows[w]
	if buckets == nil {
		buckets = map[string]V{}
		windows[w] = buckets
	}
	return buckets
}

// SyncInterval is how often a SharedStore exchanges counts with the database.
const SyncInterval = time.Second

// SharedStore lets several nodes enforce one limit without a database write
// per request: each node decides in memory from its own hits plus the other
// nodes' hits as of its last Sync, and Sync (every SyncInterval) adds this
// node's new hits to the shared rows in one statement and reads back the
// totals. A node alone is exact; across N nodes a window admits at most N ×
// the limit (each node stops at the limit on its own count), and with steady
// traffic the excess is what the other nodes admit between two syncs (see
// docs/decisions.md). A failing Sync leaves each node enforcing alone.
type SharedStore struct {
	db     *db.DB
	syncMu sync.Mutex // one Sync at a time

	mu      sync.Mutex
	windows map[int64]map[string]*sharedCount
	latest  int64
}

// sharedCount is one bucket's count in one window as this node knows it.
type sharedCount struct {
	own     int // this node's hits
	flushed int // of own, how many the database holds
	others  int // the other nodes' hits as of the last Sync
}

// NewSharedStore returns a store sharing counts through database; the table
// comes from Migrations.
func NewSharedStore(database *db.DB) *SharedStore {
	return &SharedStore{db: database, windows: map[int64]map[string]*sharedCount{}}
}

// Hit implements Store, in memory.
func (s *SharedStore) Hit(_ context.Context, key string, window time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buckets := windowOf(s.windows, &s.latest, window.Unix())
	c := buckets[key]
	if c == nil {
		c = &sharedCount{}
		buckets[key] = c
	}
	c.own++
	return c.own + c.others, nil
}

// syncRow is one bucket of one window in a Sync: the hits it adds (0 to only
// read the total) and the total the database holds afterwards.
type syncRow struct {
	Bucket      string
	WindowStart int64
	Hits        int
	add         int
}

// syncBatch bounds the rows of one statement (3 parameters each).
const syncBatch = 500

// Sync adds this node's hits since the last Sync to the shared counters and
// learns the other nodes' counts of every bucket this node has seen in the
// newest window. Rows are written in key order, so nodes syncing at the same
// time never deadlock.
func (s *SharedStore) Sync(ctx context.Context) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	var writes, reads []syncRow
	s.mu.Lock()
	for w, buckets := range s.windows {
		for key, c := range buckets {
			switch {
			case c.own > c.flushed:
				writes = append(writes, syncRow{Bucket: key, WindowStart: w, add: c.own - c.flushed})
			case w == s.latest:
				reads = append(reads, syncRow{Bucket: key, WindowStart: w})
			}
		}
	}
	s.mu.Unlock()
	slices.SortFunc(writes, func(a, b syncRow) int {
		return cmp.Or(cmp.Compare(a.WindowStart, b.WindowStart), strings.Compare(a.Bucket, b.Bucket))
	})
	var totals []syncRow
	for chunk := range slices.Chunk(writes, syncBatch) {
		got, err := s.add(ctx, chunk)
		if err != nil {
			return err
		}
		totals = append(totals, got...)
	}
	for chunk := range slices.Chunk(reads, syncBatch) {
		got, err := s.read(ctx, chunk)
		if err != nil {
			return err
		}
		totals = append(totals, got...)
	}
	type rowKey struct {
		window int64
		bucket string
	}
	added := make(map[rowKey]int, len(writes))
	for _, r := range writes {
		added[rowKey{r.WindowStart, r.Bucket}] = r.add
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range totals {
		c := s.windows[t.WindowStart][t.Bucket]
		if c == nil {
			continue // the window has passed meanwhile
		}
		c.flushed += added[rowKey{t.WindowStart, t.Bucket}]
		c.others = max(t.Hits-c.flushed, 0)
	}
	return nil
}

// add adds rows' hits and returns the new totals. The statement is marked as
// a write so that on SQLite it runs on the writer connection.
func (s *SharedStore) add(ctx context.Context, rows []syncRow) ([]syncRow, error) {
	var q strings.Builder
	q.WriteString("INSERT INTO rate_limit_hits (bucket, window_start, hits) VALUES ")
	args := make([]any, 0, 3*len(rows))
	for i, r := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?)")
		args = append(args, r.Bucket, r.WindowStart, r.add)
	}
	q.WriteString(` ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limit_hits.hits + excluded.hits
RETURNING bucket, window_start, hits`)
	var out []syncRow
	if err := s.db.Conn(ctx).Clauses(dbresolver.Write).Raw(q.String(), args...).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("share rate-limit hits: %w", err)
	}
	return out, nil
}

// read returns the totals of rows, all of one window.
func (s *SharedStore) read(ctx context.Context, rows []syncRow) ([]syncRow, error) {
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Bucket
	}
	var out []syncRow
	err := s.db.Conn(ctx).Raw("SELECT bucket, window_start, hits FROM rate_limit_hits WHERE window_start = ? AND bucket IN ?",
		rows[0].WindowStart, keys).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("read shared rate-limit hits: %w", err)
	}
	return out, nil
}

// Purge deletes the counters of windows that started before before.
func (s *SharedStore) Purge(ctx context.Context, before time.Time) error {
	err := s.db.Conn(ctx).Clauses(dbresolver.Write).
		Exec("DELETE FROM rate_limit_hits WHERE window_start < ?", before.Unix()).Error
	if err != nil {
		return fmt.Errorf("purge rate-limit hits: %w", err)
	}
	return nil
}

// Migrations create the table SharedStore uses. They run on every database,
// whichever store the service picks, so switching stores never changes the
// schema.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{
		Version: 1,
		Name:    "create rate_limit_hits",
		Up: migrate.SQL(`CREATE TABLE rate_limit_hits (
			bucket VARCHAR(200) NOT NULL,
			window_start BIGINT NOT NULL,
			hits INTEGER NOT NULL,
			PRIMARY KEY (bucket, window_start))`),
	}}
}

// Jobs share the counts every SyncInterval and delete finished windows every
// five minutes. Only the current window is ever counted; two minutes keeps
// the previous one for a node whose clock runs a little behind.
func Jobs(s *SharedStore, clk clock.Clock) []scheduler.Job {
	return []scheduler.Job{{
		Name:     "ratelimit-sync",
		Interval: SyncInterval,
		Run:      s.Sync,
	}, {
		Name:       "ratelimit-purge",
		Interval:   5 * time.Minute,
		FirstDelay: time.Minute,
		Run: func(ctx context.Context) error {
			return s.Purge(ctx, clk.Now().Add(-2*time.Minute))
		},
	}}
}
