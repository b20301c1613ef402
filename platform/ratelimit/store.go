package ratelimit

import (
	"context"
	"fmt"
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
// sharing a database need SQLStore, or each would admit the full limit.
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
	w := window.Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	if w > s.latest {
		for start := range s.windows {
			if start != s.latest {
				delete(s.windows, start)
			}
		}
		s.latest = w
	}
	buckets := s.windows[w]
	if buckets == nil {
		buckets = map[string]int{}
		s.windows[w] = buckets
	}
	buckets[key]++
	return buckets[key], nil
}

// SQLStore keeps the counters in the shared database, so several nodes
// enforce one limit together. Each hit is a single upsert that returns the new
// count: the database serialises concurrent hits on a row, so no two requests
// see the same count. (Fiber's limiter over shared storage reads, then writes,
// and let 66–101 requests through a limit of 50 on three nodes.)
type SQLStore struct {
	db *db.DB
}

// NewSQLStore returns a store over database; the table comes from Migrations.
func NewSQLStore(database *db.DB) *SQLStore { return &SQLStore{db: database} }

const hitSQL = `INSERT INTO rate_limit_hits (bucket, window_start, hits) VALUES (?, ?, 1)
ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limit_hits.hits + 1
RETURNING hits`

// Hit implements Store. The statement is marked as a write so that on SQLite
// it runs on the single writer connection rather than a read replica.
func (s *SQLStore) Hit(ctx context.Context, key string, window time.Time) (int, error) {
	var hits int
	err := s.db.Conn(ctx).Clauses(dbresolver.Write).Raw(hitSQL, key, window.Unix()).Scan(&hits).Error
	if err != nil {
		return 0, fmt.Errorf("count rate-limit hit: %w", err)
	}
	return hits, nil
}

// Purge deletes the counters of windows that started before before.
func (s *SQLStore) Purge(ctx context.Context, before time.Time) error {
	err := s.db.Conn(ctx).Clauses(dbresolver.Write).
		Exec("DELETE FROM rate_limit_hits WHERE window_start < ?", before.Unix()).Error
	if err != nil {
		return fmt.Errorf("purge rate-limit hits: %w", err)
	}
	return nil
}

// Migrations create the table SQLStore uses. They run on every database,
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

// PurgeJob deletes finished windows every five minutes. Only the current
// window is ever counted; two minutes keeps the previous one for a node whose
// clock runs a little behind.
func PurgeJob(s *SQLStore, clk clock.Clock) scheduler.Job {
	return scheduler.Job{
		Name:       "ratelimit-purge",
		Interval:   5 * time.Minute,
		FirstDelay: time.Minute,
		Run: func(ctx context.Context) error {
			return s.Purge(ctx, clk.Now().Add(-2*time.Minute))
		},
	}
}
