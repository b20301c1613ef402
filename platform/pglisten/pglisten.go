// Package pglisten keeps a dedicated Postgres connection listening on one
// NOTIFY channel: it waits for notifications, pings after a quiet interval
// so that a connection that died silently is noticed, and reconnects with
// backoff (100 ms doubling to 5 s) whenever the connection is lost. Its
// owner (the cache bus, the notifications hub) gets the payloads and is told
// of every connection and every loss, so that it can resync or forget what
// it may have missed.
package pglisten

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contractflow/contractflow/platform/db"
)

// Backoff of a reconnection, and of other retries against the database
// (the notifications sender): 100 ms doubling to 5 s.
const (
	MinBackoff = 100 * time.Millisecond
	MaxBackoff = 5 * time.Second
)

// maxConnectTimeout bounds each connection attempt, so that Start and Stop
// never wait long on an unreachable server.
const maxConnectTimeout = 5 * time.Second

// Config is what a listener needs. The callbacks run on the listener's
// goroutine (Connected's first call may run on Start's), one at a time.
type Config struct {
	DSN             string // database.dsn
	ApplicationName string // names the connection in pg_stat_activity
	Channel         string
	// Name is the listener in log lines, e.g. "cache listener".
	Name string
	Log  *slog.Logger
	// PingInterval is how long to wait for news before checking that the
	// connection is alive, and PingTimeout how long that check may take.
	PingInterval, PingTimeout time.Duration
	// Notify gets the payload of each notification.
	Notify func(payload string)
	// Connected runs once LISTEN succeeded, before any notification of that
	// connection and before PID reports it. gap is false only for the
	// connection Start made on its first attempt: otherwise notifications
	// sent since Start may have been missed.
	Connected func(gap bool)
	// Lost runs when a connection is lost and when the listener stops,
	// before PID reports 0; nil for nothing.
	Lost func()
}

// Listener is one listening connection. The zero value is ready for Start.
type Listener struct {
	cfg    Config
	pid    atomic.Uint32
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Channel is the channel named after base and the current schema of d, so
// that deployments sharing a server in different schemas do not hear each
// other.
func Channel(ctx context.Context, d *db.DB, base string) (string, error) {
	var schema string
	if err := d.Conn(db.WithoutTx(ctx)).Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
		return "", fmt.Errorf("current schema: %w", err)
	}
	return base + "_" + schema, nil
}

// Start makes a first connection attempt and then keeps the listener
// connected in the background until Stop. The error is that first
// attempt's, for the owner to log: the listener keeps trying either way.
func (l *Listener) Start(ctx context.Context, cfg Config) error {
	if l.cancel != nil {
		return nil
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	l.cfg = cfg
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel = cancel
	conn, err := l.connect(ctx, false)
	l.wg.Add(1)
	go l.run(runCtx, conn)
	return err
}

// Stop closes the connection and ends the listener.
func (l *Listener) Stop() {
	if l.cancel == nil {
		return
	}
	l.cancel()
	l.wg.Wait()
	l.cancel = nil
}

// PID is the backend process id of the connection, 0 while disconnected or
// not started (for operators and tests).
func (l *Listener) PID() uint32 { return l.pid.Load() }

func (l *Listener) connect(ctx context.Context, gap bool) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(l.cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("parse database.dsn: %w", err)
	}
	cfg.RuntimeParams["application_name"] = l.cfg.ApplicationName
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > maxConnectTimeout {
		cfg.ConnectTimeout = maxConnectTimeout
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.cfg.Channel}.Sanitize()); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	// Every notification sent from here on is delivered.
	l.cfg.Connected(gap)
	l.pid.Store(conn.PgConn().PID())
	return conn, nil
}

func (l *Listener) lost() {
	if l.cfg.Lost != nil {
		l.cfg.Lost()
	}
	l.pid.Store(0)
}

func (l *Listener) run(ctx context.Context, conn *pgx.Conn) {
	defer l.wg.Done()
	backoff := MinBackoff
	for ctx.Err() == nil {
		if conn == nil {
			c, err := l.connect(ctx, true)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				l.cfg.Log.Warn(l.cfg.Name+": reconnect failed", "err", err, "retryIn", backoff)
				select {
				case <-ctx.Done():
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, MaxBackoff)
				continue
			}
			conn, backoff = c, MinBackoff
			l.cfg.Log.Info(l.cfg.Name + " reconnected")
		}
		err := l.wait(ctx, conn)
		l.lost()
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(closeCtx)
		cancel()
		conn = nil
		if ctx.Err() == nil {
			l.cfg.Log.Warn(l.cfg.Name+" lost its connection; reconnecting", "err", err)
		}
	}
	if conn != nil {
		_ = conn.Close(context.Background())
	}
	l.lost()
}

// wait hands over notifications until the connection fails, pinging after
// PingInterval without news.
func (l *Listener) wait(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, l.cfg.PingInterval)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
				return err
			}
			pctx, cancel := context.WithTimeout(ctx, l.cfg.PingTimeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return err
			}
			continue
		}
		l.cfg.Notify(n.Payload)
	}
}
