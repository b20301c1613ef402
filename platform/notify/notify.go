// Package notify is the notifications hub: how a notification stored on one
// node reaches the sockets of every node. The rows are the truth and live in
// the notifications module; the hub only carries the news that rows exist
// (their ids and whom they are for), so that each node can read them and
// push them to the sockets it holds.
//
// The news leaves only once the creating transaction has committed (a
// rolled-back change notifies no one). On SQLite (one node) it travels in
// process. On Postgres it travels by LISTEN/NOTIFY: after the commit, one
// sender per node sends pg_notify for the news of every transaction that
// committed meanwhile, in a transaction of its own, and every node listens
// on a dedicated connection that reconnects by itself, with backoff, when it
// drops or the database restarts; after reconnecting the hub tells its
// receiver to catch up from the rows. pg_notify is not run inside the
// creating transaction: Postgres holds one database-wide lock from a
// notifying transaction's commit until its commit record is flushed, so
// every contract move queued behind the previous one's disk flush (a quarter
// of the raw transaction rate). News that a node could not send (it stopped
// between the commit and the send, or the database was unreachable) is
// not lost to the users: the rows are there, and every page and socket
// reads them.
//
// The package also defines how producers ask for notifications without
// importing the module that stores them: an event that implements
// Notifiable says whom to tell and what.
package notify

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/pglisten"
)

// Draft is one notification a producer asks for: what to say, about which
// entity, and to whom. Recipients are the users named plus the active users
// holding any of Roles, each once, without ExceptUserID (the actor, who
// knows what they did).
type Draft struct {
	Kind       string // e.g. "contract.transitioned" (DESIGN §10)
	Title      string
	Body       string
	EntityType string // e.g. "contract"
	EntityID   string
	UserIDs    []string
	Roles      []string
	// ExceptUserID is left out of the recipients; empty for none.
	ExceptUserID string
}

// Notifiable is implemented by events that notify people. The
// notifications module subscribes inside the publisher's transaction to
// every event and stores the drafts of those that implement it, with the
// change they report.
type Notifiable interface {
	Notifications() []Draft
}

// Item is the news that one notification was stored: its id and whom it
// is for: the members of Audience (a stored set of users, named by its id;
// "" for none) but Except, and UserIDs. The news names the audience rather
// than its members, so a move's news stays a hundred bytes however many
// people hold the roles it notifies: each node resolves an audience once
// and keeps it (an audience never changes).
type Item struct {
	ID       string
	Audience string
	Except   string
	UserIDs  []string
}

// Receiver is what the hub hands the news to (the notifications module).
// Its methods run on one goroutine of the hub, one call at a time.
type Receiver interface {
	// Deliver gets items created on any node, once their transaction has
	// committed.
	Deliver(items []Item)
	// Resync is called after the listener reconnected: what was announced
	// while it was away never arrived, so the receiver reads the rows.
	Resync()
}

// Config is what a hub needs.
type Config struct {
	DB  *db.DB
	DSN string // database.dsn; the Postgres listener opens its own connection with it
	Log *slog.Logger
	// PingInterval is how long the listener waits for news before it checks
	// that its connection is alive; 0 means 15 s.
	PingInterval time.Duration
}

// ApplicationName names the listener's Postgres connection (pg_stat_activity).
const ApplicationName = "contractflow-notify"

// channelBase is the NOTIFY channel; the schema is appended, so deployments
// sharing a server in different schemas do not hear each other.
const channelBase = "contractflow_notifications"

// maxPayload keeps each NOTIFY under Postgres's 8000-byte limit.
const maxPayload = 7800

// pingTimeout is how long the listener's liveness check may take.
const pingTimeout = 5 * time.Second

// Hub carries the news between nodes. The zero value is not usable; call New.
type Hub struct {
	cfg      Config
	channel  string
	recv     Receiver
	queue    chan []Item // news to hand to recv
	outbox   chan []Item // committed news to send to every node (Postgres)
	resync   chan struct{}
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	listener pglisten.Listener
	stopped  chan struct{}
}

// New returns a hub; Start makes it deliver.
func New(cfg Config) *Hub {
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 15 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Hub{cfg: cfg, queue: make(chan []Item, 1024), outbox: make(chan []Item, 1024), resync: make(chan struct{}, 1),
		stopped: make(chan struct{})}
}

// Start hands news to r from now on. On Postgres it opens the listener
// connection; when that first attempt fails the hub keeps trying in the
// background (the rows are kept, and Resync runs once it succeeds).
func (h *Hub) Start(ctx context.Context, r Receiver) error {
	h.recv = r
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.cancel = cancel
	h.wg.Add(1)
	go h.dispatch(runCtx)
	if h.cfg.DB.Dialect() != db.Postgres {
		return nil
	}
	channel, err := pglisten.Channel(ctx, h.cfg.DB, channelBase)
	if err != nil {
		cancel()
		h.wg.Wait()
		return fmt.Errorf("notify: %w", err)
	}
	h.channel = channel
	err = h.listener.Start(ctx, pglisten.Config{
		DSN: h.cfg.DSN, ApplicationName: ApplicationName, Channel: channel,
		Name: "notification listener", Log: h.cfg.Log,
		PingInterval: h.cfg.PingInterval, PingTimeout: pingTimeout,
		Notify:    h.heard,
		Connected: h.connected,
	})
	if err != nil {
		h.cfg.Log.Warn("notification listener cannot connect yet; retrying", "err", err)
	}
	h.wg.Add(1)
	go h.send(runCtx)
	return nil
}

// Stop ends the listener and the delivery goroutine.
func (h *Hub) Stop() {
	if h.cancel == nil {
		return
	}
	h.listener.Stop()
	h.cancel()
	h.wg.Wait()
	h.cancel = nil
}

// Channel is the Postgres NOTIFY channel the hub listens on ("" on SQLite).
func (h *Hub) Channel() string { return h.channel }

// ListenerPID is the backend process id of the listener's connection, 0
// while it is disconnected or on SQLite (for operators and tests).
func (h *Hub) ListenerPID() uint32 { return h.listener.PID() }

// Announce tells every node about items stored in the transaction in ctx,
// once that transaction commits: on SQLite the news is handed to this
// node's receiver, on Postgres to the sender.
func (h *Hub) Announce(ctx context.Context, items []Item) error {
	if len(items) == 0 {
		return nil
	}
	to := h.queue
	if h.cfg.DB.Dialect() == db.Postgres {
		to = h.outbox
	}
	db.AfterCommit(ctx, func() { h.put(to, items) })
	return nil
}

func (h *Hub) put(to chan []Item, items []Item) {
	select {
	case to <- items:
	case <-h.stopped:
	}
}

func (h *Hub) enqueue(items []Item) { h.put(h.queue, items) }

// maxBatch bounds the items one pg_notify statement sends.
const maxBatch = 256

// send sends the committed news to every node (this one included, which
// hears its own channel), as many transactions' items as are waiting in
// one statement. A failed send is retried until it succeeds or the hub
// stops: the listeners' own reconnection covers a restarted database.
func (h *Hub) send(ctx context.Context) {
	defer h.wg.Done()
	for {
		var batch []Item
		select {
		case <-ctx.Done():
			return
		case batch = <-h.outbox:
		}
	more:
		for len(batch) < maxBatch {
			select {
			case items := <-h.outbox:
				batch = append(batch, items...)
			default:
				break more
			}
		}
		for wait := pglisten.MinBackoff; ; wait = min(2*wait, pglisten.MaxBackoff) {
			err := h.cfg.DB.Conn(ctx).Exec(`SELECT pg_notify(?, p) FROM unnest(string_to_array(?, ';')) AS p`,
				h.channel, strings.Join(encode(batch), ";")).Error
			if err == nil {
				break
			}
			h.cfg.Log.Warn("notify: sending news failed; retrying", "items", len(batch), "in", wait, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// dispatch hands the queued news to the receiver, one call at a time.
func (h *Hub) dispatch(ctx context.Context) {
	defer h.wg.Done()
	defer close(h.stopped)
	for {
		select {
		case <-ctx.Done():
			return
		case items := <-h.queue:
			h.recv.Deliver(items)
		case <-h.resync:
			h.recv.Resync()
		}
	}
}

// encode packs items into payloads below the NOTIFY limit, separated by
// spaces, each item as "id:audience:except:user,user,…". An item with more
// named users than one payload holds continues in the next payload as
// "id:::user,…".
func encode(items []Item) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, it := range items {
		head := it.ID + ":" + it.Audience + ":" + it.Except + ":"
		if b.Len() > 0 && b.Len()+1+len(head) > maxPayload {
			flush()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(head)
		first := true // no user yet after the current head
		for _, u := range it.UserIDs {
			if b.Len()+1+len(u) > maxPayload {
				flush()
				b.WriteString(it.ID + ":::")
				first = true
			}
			if !first {
				b.WriteByte(',')
			}
			b.WriteString(u)
			first = false
		}
	}
	flush()
	return out
}

func decode(payload string) []Item {
	var out []Item
	for part := range strings.SplitSeq(payload, " ") {
		f := strings.SplitN(part, ":", 4)
		if len(f) != 4 || f[0] == "" {
			continue
		}
		it := Item{ID: f[0], Audience: f[1], Except: f[2]}
		for u := range strings.SplitSeq(f[3], ",") {
			if u != "" {
				it.UserIDs = append(it.UserIDs, u)
			}
		}
		if it.Audience != "" || len(it.UserIDs) > 0 {
			out = append(out, it)
		}
	}
	return out
}

// heard queues the news in one notification for the receiver.
func (h *Hub) heard(payload string) {
	if items := decode(payload); len(items) > 0 {
		h.enqueue(items)
	}
}

// connected asks the receiver to catch up from the rows when news may have
// been missed (every connection but Start's first).
func (h *Hub) connected(gap bool) {
	if !gap {
		return
	}
	select {
	case h.resync <- struct{}{}:
	default: // one is already pending
	}
}
