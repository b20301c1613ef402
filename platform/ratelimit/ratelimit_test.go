package ratelimit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/ratelimit"
)

// t0 is 10 seconds into a minute, so 50 seconds remain in its window.
var t0 = time.Date(2026, 11, 21, 8, 0, 10, 0, time.UTC)

// backend is one store under test.
type backend struct {
	name string
	open func(t *testing.T) ratelimit.Store
}

// backends returns the memory store, the shared store on a SQLite file and,
// when CONTRACTFLOW_TEST_POSTGRES_DSN is set, the shared store on Postgres.
// Each decides in memory, so each must be exact on its own.
func backends(t *testing.T) []backend {
	t.Helper()
	list := []backend{
		{name: "memory", open: func(*testing.T) ratelimit.Store { return ratelimit.NewMemoryStore() }},
		{name: "sqlite", open: func(t *testing.T) ratelimit.Store { return ratelimit.NewSharedStore(openSQLite(t)) }},
	}
	if os.Getenv("CONTRACTFLOW_TEST_POSTGRES_DSN") != "" {
		list = append(list, backend{name: "postgres", open: func(t *testing.T) ratelimit.Store {
			return ratelimit.NewSharedStore(openPostgres(t))
		}})
	}
	return list
}

func migrateUp(t *testing.T, database *db.DB) {
	t.Helper()
	_, err := migrate.Up(context.Background(), database,
		[]migrate.Set{{Module: "platform", Migrations: ratelimit.Migrations()}})
	require.NoError(t, err)
}

func openSQLite(t *testing.T) *db.DB {
	t.Helper()
	database, err := db.Open(db.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "x.db"), MaxOpenConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close() })
	migrateUp(t, database)
	return database
}

// openPostgres opens a fresh schema of the test database; it fails, not
// skips, when the configured database cannot be reached.
func openPostgres(t *testing.T) *db.DB {
	t.Helper()
	dsn := os.Getenv("CONTRACTFLOW_TEST_POSTGRES_DSN")
	admin, err := db.Open(db.Config{Driver: "postgres", DSN: dsn, MaxOpenConns: 2})
	require.NoError(t, err, "CONTRACTFLOW_TEST_POSTGRES_DSN is set but the database cannot be reached")
	t.Cleanup(func() { _ = admin.Close() })

	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	schema := "t_" + hex.EncodeToString(suffix)
	require.NoError(t, admin.Conn(context.Background()).Exec("CREATE SCHEMA "+schema).Error)
	t.Cleanup(func() {
		assert.NoError(t, admin.Conn(context.Background()).Exec("DROP SCHEMA "+schema+" CASCADE").Error)
	})

	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	database, err := db.Open(db.Config{Driver: "postgres", DSN: dsn + sep + "search_path=" + schema, MaxOpenConns: 8})
	require.NoError(t, err)
	// Registered after the schema's cleanup, so it runs first: the
	// connections close before the schema is dropped.
	t.Cleanup(func() { _ = database.Close() })
	migrateUp(t, database)
	return database
}

// server is an app with the limiter on two routes: /api/x under the global
// policy only, /api/login under the global policy and "auth-login". The
// client's address comes from X-Forwarded-For, the peer being trusted.
type server struct {
	app *fiber.App
	clk *clock.Manual
}

func newServer(t *testing.T, store ratelimit.Store, globalPerMinute, loginPerMinute int) *server {
	t.Helper()
	clk := clock.NewManual(t0)
	ip, err := httpx.NewClientIP([]string{"0.0.0.0"})
	require.NoError(t, err)
	lim := ratelimit.New(store, clk, ip, slog.New(slog.DiscardHandler))
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(slog.New(slog.DiscardHandler))})
	app.Use(lim.Middleware("global", globalPerMinute, func(c *fiber.Ctx) bool { return c.Path() == "/health/live" }))
	ok := func(c *fiber.Ctx) error { return c.SendString("ok") }
	app.Get("/api/x", ok)
	app.Get("/health/live", ok)
	app.Post("/api/login", lim.Middleware("auth-login", loginPerMinute, nil), ok)
	return &server{app: app, clk: clk}
}

func (s *server) call(t *testing.T, method, path, clientIP string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("X-Forwarded-For", clientIP)
	resp, err := s.app.Test(req, -1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func requireLimited(t *testing.T, resp *http.Response, wantRetryAfter int) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, httpx.ProblemContentType, resp.Header.Get("Content-Type"))
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", resp.Header.Get("Retry-After"))
	assert.GreaterOrEqual(t, retry, 1)
	if wantRetryAfter > 0 {
		assert.Equal(t, wantRetryAfter, retry)
	}
	var problem map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&problem))
	assert.Equal(t, "rate_limited", problem["code"])
	assert.EqualValues(t, 429, problem["status"])
	assert.EqualValues(t, retry, problem["retryAfter"])
	assert.Contains(t, problem["detail"], strconv.Itoa(retry)+" seconds")
}

func TestLimiter(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			cases := []struct {
				name string
				run  func(t *testing.T, s *server)
			}{
				{name: "admits the limit, then answers 429 until the next minute", run: func(t *testing.T, s *server) {
					for i := 1; i <= 3; i++ {
						resp := s.call(t, "GET", "/api/x", "198.51.100.1")
						require.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i)
						assert.Equal(t, "3", resp.Header.Get("X-RateLimit-Limit"))
						assert.Equal(t, strconv.Itoa(3-i), resp.Header.Get("X-RateLimit-Remaining"))
					}
					requireLimited(t, s.call(t, "GET", "/api/x", "198.51.100.1"), 50)
					s.clk.Advance(49*time.Second + 500*time.Millisecond) // 0.5 s left: rounds up to 1
					requireLimited(t, s.call(t, "GET", "/api/x", "198.51.100.1"), 1)
					s.clk.Advance(500 * time.Millisecond) // the next minute starts
					assert.Equal(t, http.StatusOK, s.call(t, "GET", "/api/x", "198.51.100.1").StatusCode)
				}},
				{name: "counts each client address separately", run: func(t *testing.T, s *server) {
					for range 3 {
						require.Equal(t, http.StatusOK, s.call(t, "GET", "/api/x", "198.51.100.1").StatusCode)
					}
					requireLimited(t, s.call(t, "GET", "/api/x", "198.51.100.1"), 0)
					assert.Equal(t, http.StatusOK, s.call(t, "GET", "/api/x", "198.51.100.2").StatusCode)
				}},
				{name: "a spoofed left-most address does not get a fresh bucket", run: func(t *testing.T, s *server) {
					for i := range 3 {
						require.Equal(t, http.StatusOK, s.call(t, "GET", "/api/x", "10.9.9."+strconv.Itoa(i)+", 198.51.100.1").StatusCode)
					}
					requireLimited(t, s.call(t, "GET", "/api/x", "10.9.9.9, 198.51.100.1"), 0)
				}},
				{name: "counts each policy separately", run: func(t *testing.T, s *server) {
					// Login allows 2 of the global 3: the third login is refused by auth-login,
					// yet the global bucket (at 3) still admits nothing more.
					for range 2 {
						require.Equal(t, http.StatusOK, s.call(t, "POST", "/api/login", "198.51.100.1").StatusCode)
					}
					requireLimited(t, s.call(t, "POST", "/api/login", "198.51.100.1"), 0)
					requireLimited(t, s.call(t, "GET", "/api/x", "198.51.100.1"), 0)
					// Another client's login bucket is untouched.
					assert.Equal(t, http.StatusOK, s.call(t, "POST", "/api/login", "198.51.100.2").StatusCode)
				}},
				{name: "skipped requests are neither counted nor limited", run: func(t *testing.T, s *server) {
					for range 10 {
						require.Equal(t, http.StatusOK, s.call(t, "GET", "/health/live", "198.51.100.1").StatusCode)
					}
					assert.Equal(t, http.StatusOK, s.call(t, "GET", "/api/x", "198.51.100.1").StatusCode)
				}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					tc.run(t, newServer(t, be.open(t), 3, 2))
				})
			}
		})
	}
}

// TestStoreAdmitsExactlyTheLimit hits one bucket concurrently: 20 clients ×
// 5 requests against a limit of 50 must admit exactly 50.
func TestStoreAdmitsExactlyTheLimit(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			store := be.open(t)
			window := t0.Truncate(time.Minute)
			var admitted atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, 100)
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 5 {
						n, err := store.Hit(context.Background(), "global|198.51.100.1", window)
						if err != nil {
							errs <- err
							return
						}
						if n <= 50 {
							admitted.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			assert.EqualValues(t, 50, admitted.Load())
			n, err := store.Hit(context.Background(), "global|198.51.100.1", window)
			require.NoError(t, err)
			assert.Equal(t, 101, n, "every hit was counted once")
		})
	}
}

// TestMiddlewareAdmitsExactlyTheLimit drives the same race through HTTP.
func TestMiddlewareAdmitsExactlyTheLimit(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			s := newServer(t, be.open(t), 50, 5)
			var ok, limited atomic.Int64
			var wg sync.WaitGroup
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 5 {
						req := httptest.NewRequest("GET", "/api/x", nil)
						req.Header.Set("X-Forwarded-For", "198.51.100.1")
						resp, err := s.app.Test(req, -1)
						if !assert.NoError(t, err) {
							return
						}
						_ = resp.Body.Close()
						switch resp.StatusCode {
						case http.StatusOK:
							ok.Add(1)
						case http.StatusTooManyRequests:
							limited.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			assert.EqualValues(t, 50, ok.Load())
			assert.EqualValues(t, 50, limited.Load())
		})
	}
}

func TestStoreWindows(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			cases := []struct {
				name  string
				hits  []time.Time // windows hit in order
				key   string
				at    time.Time
				wantN int
			}{
				{name: "first hit counts 1", at: t0, wantN: 1},
				{name: "same window accumulates", hits: []time.Time{t0, t0}, at: t0, wantN: 3},
				{name: "next window starts over", hits: []time.Time{t0, t0}, at: t0.Add(time.Minute), wantN: 1},
				{name: "previous window is still counted", hits: []time.Time{t0, t0.Add(time.Minute)}, at: t0, wantN: 2},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					store := be.open(t)
					ctx := context.Background()
					for _, w := range tc.hits {
						_, err := store.Hit(ctx, "k", w.Truncate(time.Minute))
						require.NoError(t, err)
					}
					n, err := store.Hit(ctx, "k", tc.at.Truncate(time.Minute))
					require.NoError(t, err)
					assert.Equal(t, tc.wantN, n)
				})
			}
		})
	}
}

// databases returns a migrated SQLite database and, when
// CONTRACTFLOW_TEST_POSTGRES_DSN is set, a migrated Postgres schema.
func databases(t *testing.T) map[string]func(t *testing.T) *db.DB {
	t.Helper()
	out := map[string]func(t *testing.T) *db.DB{"sqlite": openSQLite}
	if os.Getenv("CONTRACTFLOW_TEST_POSTGRES_DSN") != "" {
		out["postgres"] = openPostgres
	}
	return out
}

// hitsInDatabase is the shared count of key in window (0 without a row).
func hitsInDatabase(t *testing.T, database *db.DB, key string, window time.Time) int {
	t.Helper()
	var hits []int
	require.NoError(t, database.Conn(context.Background()).
		Raw("SELECT hits FROM rate_limit_hits WHERE bucket = ? AND window_start = ?", key, window.Unix()).Scan(&hits).Error)
	if len(hits) == 0 {
		return 0
	}
	return hits[0]
}

func TestPurge(t *testing.T) {
	for name, open := range databases(t) {
		t.Run(name, func(t *testing.T) {
			database := open(t)
			store := ratelimit.NewSharedStore(database)
			ctx := context.Background()
			now := t0.Truncate(time.Minute)
			windows := map[string]time.Time{
				"old":      now.Add(-5 * time.Minute),
				"2m ago":   now.Add(-2 * time.Minute),
				"previous": now.Add(-time.Minute),
				"current":  now,
			}
			for _, w := range windows {
				require.NoError(t, database.Conn(ctx).
					Exec("INSERT INTO rate_limit_hits (bucket, window_start, hits) VALUES ('k', ?, 3)", w.Unix()).Error)
			}
			jobs := ratelimit.Jobs(store, clock.NewManual(now))
			require.Len(t, jobs, 2)
			assert.Equal(t, ratelimit.SyncInterval, jobs[0].Interval)
			purge := jobs[1]
			assert.Equal(t, 5*time.Minute, purge.Interval)
			assert.NotEmpty(t, purge.Name)
			require.NoError(t, purge.Run(ctx))

			for window, want := range map[string]int{"old": 0, "2m ago": 3, "previous": 3, "current": 3} {
				assert.Equal(t, want, hitsInDatabase(t, database, "k", windows[window]), window)
			}
		})
	}
}

// TestSharedStoreSharesCounts runs two nodes' stores on one database: each
// decides in memory, and after a sync each counts the other's hits.
func TestSharedStoreSharesCounts(t *testing.T) {
	for name, open := range databases(t) {
		t.Run(name, func(t *testing.T) {
			database := open(t)
			a, b := ratelimit.NewSharedStore(database), ratelimit.NewSharedStore(database)
			ctx := context.Background()
			window := t0.Truncate(time.Minute)
			hit := func(s *ratelimit.SharedStore, key string) int {
				t.Helper()
				n, err := s.Hit(ctx, key, window)
				require.NoError(t, err)
				return n
			}
			for range 3 {
				hit(a, "k")
			}
			hit(a, "only-a")
			assert.Equal(t, 1, hit(b, "k"), "before a sync each node counts alone")
			assert.Equal(t, 0, hitsInDatabase(t, database, "k", window), "a hit writes nothing")

			require.NoError(t, a.Sync(ctx))
			require.NoError(t, b.Sync(ctx))
			assert.Equal(t, 4, hitsInDatabase(t, database, "k", window))
			assert.Equal(t, 5, hit(b, "k"), "b counts a's three hits")
			// a learns b's flushed hit at its next sync, without writing anything
			// new for k; b's latest hit is still b's alone.
			require.NoError(t, a.Sync(ctx))
			assert.Equal(t, 5, hit(a, "k"))
			assert.Equal(t, 2, hit(a, "only-a"))

			// Both flush again: nothing is counted twice.
			require.NoError(t, a.Sync(ctx))
			require.NoError(t, b.Sync(ctx))
			assert.Equal(t, 6, hitsInDatabase(t, database, "k", window))
			assert.Equal(t, 2, hitsInDatabase(t, database, "only-a", window))
			assert.Equal(t, 7, hit(b, "k"))

			// A new window starts from zero.
			next := window.Add(time.Minute)
			n, err := b.Hit(ctx, "k", next)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
		})
	}
}

// failingStore stands for a database that is down.
type failingStore struct{}

func (failingStore) Hit(context.Context, string, time.Time) (int, error) {
	return 0, errors.New("connection refused")
}

func TestStoreFailureLetsRequestsThrough(t *testing.T) {
	var logged strings.Builder
	clk := clock.NewManual(t0)
	ip, err := httpx.NewClientIP(nil)
	require.NoError(t, err)
	lim := ratelimit.New(failingStore{}, clk, ip, slog.New(slog.NewTextHandler(&logged, nil)))
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(slog.New(slog.DiscardHandler))})
	app.Use(lim.Middleware("global", 1, nil))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok") })
	for i := range 3 {
		resp, err := app.Test(httptest.NewRequest("GET", "/", nil), -1)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i)
	}
	assert.Contains(t, logged.String(), "connection refused")
}

func TestMiddlewareRefusesBadPolicies(t *testing.T) {
	lim := ratelimit.New(ratelimit.NewMemoryStore(), clock.System{}, func(*fiber.Ctx) string { return "" }, nil)
	cases := []struct {
		name      string
		policy    string
		perMinute int
	}{
		{name: "empty name", policy: "", perMinute: 5},
		{name: "zero limit", policy: "p", perMinute: 0},
		{name: "negative limit", policy: "p", perMinute: -1},
		{name: "name too long", policy: strings.Repeat("p", 65), perMinute: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Panics(t, func() { lim.Middleware(tc.policy, tc.perMinute, nil) })
		})
	}
}
