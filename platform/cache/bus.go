package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contractflow/contractflow/platform/db"
)

// Bus carries cache invalidations between the nodes sharing one database.
// The kernel makes one per process (kernel.App.Caches); every Map names
// itself to it.
//
// On SQLite there is one node and nothing travels. On Postgres, Changed runs
// pg_notify inside the changing transaction, so the news leaves on commit
// and never for a rolled-back change, and each node listens on a dedicated
// connection. While that connection is down the maps answer nothing from
// memory (every lookup reads the database, nothing is stored); once it is
// back, LISTEN runs first, then every map is emptied, then they answer
// again: what was announced while the node was away cannot survive. A
// connection that died silently is noticed by a ping after PingInterval
// without news, so a node may serve a superseded value for at most
// PingInterval + PingTimeout after another node's change (1 s + 1 s by
// default); with the connection alive the delay is Postgres's delivery, a
// few milliseconds.
type Bus struct {
	cfg     Config
	channel string

	mu   sync.Mutex
	maps map[string]dropper

	live   atomic.Bool
	cancel context.CancelFunc
	wg     sync.WaitGroup
	pid    atomic.Uint32
}

// Config is what a Bus needs.
type Config struct {
	DB  *db.DB
	DSN string // database.dsn; the listener opens its own connection with it
	Log *slog.Logger
	// PingInterval is how long the listener waits for news before it checks
	// that its connection is alive, and PingTimeout how long that check may
	// take; 0 means 1 s each.
	PingInterval, PingTimeout time.Duration
}

// ApplicationName names the listener's Postgres connection (pg_stat_activity).
const ApplicationName = "contractflow-cache"

const (
	channelBase = "contractflow_cache"
	maxPayload  = 7800 // below Postgres's 8000-byte NOTIFY limit
	minBackoff  = 100 * time.Millisecond
	maxBackoff  = 5 * time.Second
)

// NewBus returns a bus; on Postgres the maps answer from memory only once
// Start has connected the listener.
func NewBus(cfg Config) *Bus {
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = time.Second
	}
	if cfg.PingTimeout <= 0 {
		cfg.PingTimeout = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	b := &Bus{cfg: cfg, maps: map[string]dropper{}}
	if cfg.DB == nil || cfg.DB.Dialect() != db.Postgres {
		b.live.Store(true)
	}
	return b
}

// Live reports whether the maps may answer from memory: always on SQLite,
// on Postgres while the listener is connected.
func (b *Bus) Live() bool { return b.live.Load() }

// ListenerPID is the backend process id of the listener's connection, 0
// while it is disconnected or on SQLite (for operators and tests).
func (b *Bus) ListenerPID() uint32 { return b.pid.Load() }

func (b *Bus) register(name string, m dropper) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.maps[name]; dup {
		panic(fmt.Sprintf("cache: two maps named %q", name))
	}
	b.maps[name] = m
}

func (b *Bus) dropAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.maps {
		m.Drop()
	}
}

func (b *Bus) drop(name string, keys []string) {
	b.mu.Lock()
	m := b.maps[name]
	b.mu.Unlock()
	if m != nil {
		m.Drop(keys...)
	}
}

// Start connects the listener on Postgres (and keeps it connected until
// Stop); when the first attempt fails it keeps trying in the background and
// the maps read through to the database meanwhile.
func (b *Bus) Start(ctx context.Context) error {
	if b.cfg.DB == nil || b.cfg.DB.Dialect() != db.Postgres || b.cancel != nil {
		return nil
	}
	var schema string
	if err := b.cfg.DB.Conn(db.WithoutTx(ctx)).Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
		return fmt.Errorf("cache: current schema: %w", err)
	}
	b.channel = channelBase + "_" + schema
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.cancel = cancel
	conn, err := b.connect(ctx)
	if err != nil {
		b.cfg.Log.Warn("cache listener cannot connect yet; caches read through until it does", "err", err)
	}
	b.wg.Add(1)
	go b.listen(runCtx, conn)
	return nil
}

// Stop ends the listener; the maps then read through to the database.
func (b *Bus) Stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	b.wg.Wait()
	b.cancel = nil
}

// announce sends the change of keys of map name to the other nodes, inside
// the transaction in ctx (nothing to send on SQLite).
func (b *Bus) announce(ctx context.Context, name string, keys []string) error {
	if b.cfg.DB == nil || b.cfg.DB.Dialect() != db.Postgres {
		return nil
	}
	// The channel is named after the schema, so deployments sharing a
	// server in different schemas do not hear each other; the statement
	// works out the same name Start listens on (a command that never
	// started the bus still reaches the servers).
	return b.cfg.DB.Conn(ctx).Exec(`SELECT pg_notify(? || '_' || current_schema(), p) FROM unnest(string_to_array(?, ';')) AS p`,
		channelBase, strings.Join(encode(name, keys), ";")).Error
}

// encode writes "name key,key,…" payloads below the NOTIFY limit; no keys
// means the whole map. Names and keys contain neither spaces, commas nor
// semicolons (uuids, role names).
func encode(name string, keys []string) []string {
	if len(keys) == 0 {
		return []string{name}
	}
	var out []string
	var b strings.Builder
	for _, k := range keys {
		if b.Len() > 0 && b.Len()+1+len(k) > maxPayload {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(name)
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(k)
	}
	return append(out, b.String())
}

func (b *Bus) deliver(payload string) {
	name, keys, _ := strings.Cut(payload, " ")
	if keys == "" {
		b.drop(name, nil)
		return
	}
	b.drop(name, strings.Split(keys, ","))
}

// connect opens the listener connection, listens, empties every map and
// lets them answer again.
func (b *Bus) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(b.cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("cache: parse database.dsn: %w", err)
	}
	cfg.RuntimeParams["application_name"] = ApplicationName
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 5*time.Second {
		cfg.ConnectTimeout = 5 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{b.channel}.Sanitize()); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	// Every change committed from here on is delivered; what came before is
	// forgotten.
	b.dropAll()
	b.pid.Store(conn.PgConn().PID())
	b.live.Store(true)
	return conn, nil
}

// lost marks the maps unusable and empties them, before anything else can
// be missed.
func (b *Bus) lost() {
	b.live.Store(false)
	b.pid.Store(0)
	b.dropAll()
}

func (b *Bus) listen(ctx context.Context, conn *pgx.Conn) {
	defer b.wg.Done()
	backoff := minBackoff
	for ctx.Err() == nil {
		if conn == nil {
			c, err := b.connect(ctx)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				b.cfg.Log.Warn("cache listener: reconnect failed", "err", err, "retryIn", backoff)
				select {
				case <-ctx.Done():
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			conn, backoff = c, minBackoff
			b.cfg.Log.Info("cache listener reconnected")
		}
		err := b.wait(ctx, conn)
		b.lost()
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(closeCtx)
		cancel()
		conn = nil
		if ctx.Err() == nil {
			b.cfg.Log.Warn("cache listener lost its connection; reconnecting", "err", err)
		}
	}
	if conn != nil {
		_ = conn.Close(context.Background())
	}
	b.lost()
}

// wait applies notifications until the connection fails, pinging after
// PingInterval without news so that a silently dead connection is noticed.
func (b *Bus) wait(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, b.cfg.PingInterval)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
				return err
			}
			pctx, cancel := context.WithTimeout(ctx, b.cfg.PingTimeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return err
			}
			continue
		}
		b.deliver(n.Payload)
	}
}
