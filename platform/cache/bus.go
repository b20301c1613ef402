package cache

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/pglisten"
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
	cfg Config

	mu   sync.Mutex
	maps map[string]dropper

	live     atomic.Bool
	listener pglisten.Listener
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
func (b *Bus) ListenerPID() uint32 { return b.listener.PID() }

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
	if b.cfg.DB == nil || b.cfg.DB.Dialect() != db.Postgres {
		return nil
	}
	channel, err := pglisten.Channel(ctx, b.cfg.DB, channelBase)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	err = b.listener.Start(ctx, pglisten.Config{
		DSN: b.cfg.DSN, ApplicationName: ApplicationName, Channel: channel,
		Name: "cache listener", Log: b.cfg.Log,
		PingInterval: b.cfg.PingInterval, PingTimeout: b.cfg.PingTimeout,
		Notify:    b.deliver,
		Connected: func(bool) { b.connected() },
		Lost:      b.lost,
	})
	if err != nil {
		b.cfg.Log.Warn("cache listener cannot connect yet; caches read through until it does", "err", err)
	}
	return nil
}

// Stop ends the listener; the maps then read through to the database.
func (b *Bus) Stop() { b.listener.Stop() }

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

// connected empties every map and lets them answer again: every change
// committed from here on is delivered, what came before is forgotten.
func (b *Bus) connected() {
	b.dropAll()
	b.live.Store(true)
}

// lost marks the maps unusable and empties them, before anything else can
// be missed.
func (b *Bus) lost() {
	b.live.Store(false)
	b.dropAll()
}
