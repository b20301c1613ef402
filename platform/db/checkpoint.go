package db

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// By default SQLite checkpoints inside the commit that takes the WAL past
// 1 000 pages: that commit copies them into the database file while it
// still holds the write lock, so every write behind it waits, and small
// batches copy the same hot pages (counters, index leaves) again and
// again. Measured on the transition benchmark, the server spent 0.5 ms of
// CPU per move on it. So the writer never checkpoints
// (wal_autocheckpoint = 0), and a checkpointer on a connection of its own
// copies the WAL every checkpointInterval, in PASSIVE mode: beside the
// writer and the readers, never waiting for either. The WAL then holds at
// most an interval of writes beyond what readers still need, as before.
const checkpointInterval = 250 * time.Millisecond

// checkpointer copies the WAL into the database file in the background.
type checkpointer struct {
	conn   *sql.DB
	cancel context.CancelFunc
	done   chan struct{}
}

// startCheckpointer opens its own connection with dsn and starts copying.
func startCheckpointer(dsn string, log *slog.Logger) (*checkpointer, error) {
	conn, err := sql.Open(sqliteDriver(false), dsn)
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{conn: conn, cancel: cancel, done: make(chan struct{})}
	go c.run(ctx, log)
	return c, nil
}

func (c *checkpointer) run(ctx context.Context, log *slog.Logger) {
	defer close(c.done)
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, err := c.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			// Said once per failing spell: the WAL grows meanwhile.
			log.Error("sqlite checkpoint failed; the WAL file grows until one succeeds", "err", err)
			failing = true
		case err == nil && failing:
			log.Info("sqlite checkpoints work again")
			failing = false
		}
	}
}

// stop ends the copying and closes the connection; SQLite's last
// connection to close checkpoints whatever is left.
func (c *checkpointer) stop() error {
	c.cancel()
	<-c.done
	return c.conn.Close()
}
