package core

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/notify"
)

// Socket limits and timings.
const (
	// SendBuffer is how many messages a socket may fall behind before it is
	// closed with 1008 (DESIGN §10); the rows stay readable.
	SendBuffer = 256
	// PingInterval keeps idle sockets alive through proxies; a client that
	// answers nothing for pongWait is gone.
	PingInterval = 25 * time.Second
	pongWait     = 2*PingInterval + 10*time.Second
	writeWait    = 10 * time.Second
	// maxClientMessage bounds what a client may send (pings are tiny).
	maxClientMessage = 4096
	// catchUpLimit bounds what one user gets pushed after a reconnection of
	// the listener; the rest stays readable.
	catchUpLimit = SendBuffer
)

// Close codes.
const (
	closeGoingAway   = websocket.CloseGoingAway       // 1001: the server stops
	closePolicy      = websocket.ClosePolicyViolation // 1008: fell behind, or the sign-in ended
	reasonSlow       = "too slow: reload the notifications"
	reasonSignedOut  = "signed out"
	reasonStopping   = "server stopping"
	pongMessage      = `{"type":"pong"}`
	clientPingType   = "ping"
	pushNotification = "notification"
)

// socket is one open WebSocket. Its queue is a bounded slice rather than a
// channel, so an idle socket holds no buffer at all.
type socket struct {
	conn          *websocket.Conn
	userID, stamp string

	mu      sync.Mutex
	pending []*[]byte
	kicked  bool
	wake    chan struct{} // cap 1: the queue has something
	closing chan closeReq // cap 1: close with this code
	done    chan struct{} // the reader ended
}

type closeReq struct {
	code   int
	reason string
}

// send queues msg without ever blocking; a socket already SendBuffer
// messages behind is closed instead.
func (s *socket) send(msg *[]byte) {
	s.mu.Lock()
	if s.kicked {
		s.mu.Unlock()
		return
	}
	if len(s.pending) >= SendBuffer {
		s.mu.Unlock()
		s.kick(closePolicy, reasonSlow)
		return
	}
	s.pending = append(s.pending, msg)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// kick asks the writer to close the socket with code, dropping what is
// queued; the first request wins.
func (s *socket) kick(code int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kicked {
		return
	}
	s.kicked = true
	s.pending = nil
	s.closing <- closeReq{code: code, reason: reason}
}

func (s *socket) take() []*[]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}

func (s *socket) isKicked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kicked
}

// userSockets are a user's sockets on this node and what a catch-up after
// a listener outage must still send them: rows newer than floor that were
// neither pushed nor there when a socket opened (the client lists those).
// A row's created_at is its transaction's clock, so a row may commit after
// a newer one was pushed or listed; the catch-up therefore looks
// lateCommitWindow behind the newest row pushed or listed and skips the ids
// it knows.
type userSockets struct {
	set     map[*socket]struct{}
	floor   time.Time
	floorID string
	lastAt  time.Time
	pushed  map[string]time.Time // id → created_at, within lateCommitWindow of lastAt
	listed  map[string]time.Time // id → created_at of the rows there when a socket opened, from floor on
}

// lateCommitWindow is how long after a newer notification an older one may
// still commit and be caught up.
const lateCommitWindow = time.Minute

// opened records what the user had when a socket opened: their rows of the
// last lateCommitWindow before their newest one (newest first, at most
// catchUpLimit). A catch-up skips them, and everything older than the
// window (or than the oldest row read, when the window held more). The
// floor is not the newest row itself: that row may be a push that came
// before this read, and a row older than it may still commit — missed
// while the listener was away, the catch-up owes it. Live pushes ignore
// what was listed: the read may come after a row the client never saw.
func (u *userSockets) opened(had []Notification) {
	if len(had) == 0 {
		return
	}
	floor, floorID := had[0].CreatedAt.Add(-lateCommitWindow), ""
	if len(had) == catchUpLimit {
		last := had[len(had)-1]
		floor, floorID = last.CreatedAt, last.ID
	}
	if floor.After(u.floor) || (floor.Equal(u.floor) && floorID > u.floorID) {
		u.floor, u.floorID = floor, floorID
	}
	if had[0].CreatedAt.After(u.lastAt) {
		u.lastAt = had[0].CreatedAt
	}
	if u.listed == nil {
		u.listed = map[string]time.Time{}
	}
	for id, at := range u.listed {
		if at.Before(u.floor) {
			delete(u.listed, id)
		}
	}
	for _, n := range had {
		u.listed[n.ID] = n.CreatedAt
	}
}

// advance records a pushed row.
func (u *userSockets) advance(n Notification) {
	if n.CreatedAt.After(u.lastAt) {
		u.lastAt = n.CreatedAt
	}
	if u.pushed == nil {
		u.pushed = map[string]time.Time{}
	}
	u.pushed[n.ID] = n.CreatedAt
	if len(u.pushed) > 2*SendBuffer {
		for id, at := range u.pushed {
			if at.Before(u.lastAt.Add(-lateCommitWindow)) {
				delete(u.pushed, id)
			}
		}
	}
}

// pushedAlready reports whether n went to the user's sockets already.
func (u *userSockets) pushedAlready(n Notification) bool {
	_, ok := u.pushed[n.ID]
	return ok
}

// catchUpFrom is where a catch-up reads this user's rows from.
func (u *userSockets) catchUpFrom() time.Time {
	if from := u.lastAt.Add(-lateCommitWindow); from.After(u.floor) {
		return from
	}
	return u.floor
}

// isNew reports whether a catch-up still owes the user n (the ids already
// pushed are skipped by push itself).
func (u *userSockets) isNew(n Notification) bool {
	if n.CreatedAt.Before(u.floor) || (n.CreatedAt.Equal(u.floor) && n.ID <= u.floorID) {
		return false
	}
	if _, ok := u.listed[n.ID]; ok {
		return false
	}
	return !n.CreatedAt.Before(u.catchUpFrom())
}

// sockets are the WebSockets open on this node, by user.
type sockets struct {
	svc      *Service
	upgrader websocket.FastHTTPUpgrader
	mu       sync.Mutex
	users    map[string]*userSockets
	open     sync.WaitGroup
	count    atomic.Int64
	stop     chan struct{}
	stopOnce sync.Once
	watching sync.WaitGroup
}

func newSockets(svc *Service) *sockets {
	return &sockets{svc: svc, users: map[string]*userSockets{}, stop: make(chan struct{}),
		upgrader: websocket.FastHTTPUpgrader{
			HandshakeTimeout: 10 * time.Second,
			ReadBufferSize:   512,
			WriteBufferSize:  1024,
			// Write buffers are taken for a write and given back, so an idle
			// socket holds none.
			WriteBufferPool: &sync.Pool{},
			// The handler checked the origin before redeeming the ticket.
			CheckOrigin: func(*fasthttp.RequestCtx) bool { return true },
		}}
}

// Open is the number of sockets open on this node.
func (s *Service) Open() int64 { return s.sockets.count.Load() }

// originAllowed admits clients that send no Origin (not a browser), pages
// of the service itself (same host) and the configured allowedOrigins;
// never every origin.
func (s *Service) originAllowed(c *fiber.Ctx) bool {
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return true
	}
	if slices.Contains(s.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, string(c.Context().Host()))
}

// Socket upgrades GET /api/notifications/ws?ticket=… once the ticket is
// redeemed. Order: no ticket 401, not a WebSocket request 400, an origin
// not allowed 403 (before the ticket is spent), a used, late or forged
// ticket 401; none of them upgrades.
func (s *Service) Socket(c *fiber.Ctx) error {
	ticket := c.Query("ticket")
	if ticket == "" {
		return apperr.Unauthorized("token_invalid", "Open the socket with ?ticket= from POST /api/notifications/ws-ticket.")
	}
	if !websocket.FastHTTPIsWebSocketUpgrade(c.Context()) {
		return apperr.FieldError("Upgrade", "Open this address with a WebSocket client.")
	}
	if !s.originAllowed(c) {
		return apperr.Forbidden("This origin is not in allowedOrigins.")
	}
	userID, stamp, err := s.redeem(c.UserContext(), ticket)
	if err != nil {
		return err
	}
	err = s.sockets.upgrader.Upgrade(c.Context(), func(conn *websocket.Conn) { s.sockets.serve(conn, userID, stamp) })
	if err != nil {
		// The upgrader has answered the client itself.
		s.Log.Warn("websocket upgrade failed", "err", err)
	}
	return nil
}

// serve runs one socket until it closes: this goroutine writes, another
// reads.
func (ss *sockets) serve(conn *websocket.Conn, userID, stamp string) {
	sock := &socket{conn: conn, userID: userID, stamp: stamp, wake: make(chan struct{}, 1),
		closing: make(chan closeReq, 1), done: make(chan struct{})}
	if !ss.add(sock) {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(closeGoingAway, reasonStopping), time.Now().Add(time.Second))
		return
	}
	defer ss.remove(sock)
	ss.initCursor(userID)
	limitKernelBuffer(conn)
	go ss.read(sock)
	ss.write(sock)
	// The server reuses the connection's buffers once this returns: end
	// the reader first.
	_ = conn.SetReadDeadline(time.Now())
	<-sock.done
}

// kernelSendBuffer caps what the kernel holds for one socket: a client
// that stops reading then fills its 256-message queue after some 64 KiB
// rather than after the megabytes Linux would otherwise buffer, and 10 000
// idle sockets cannot pin gigabytes of kernel memory.
const kernelSendBuffer = 64 << 10

func limitKernelBuffer(conn *websocket.Conn) {
	if tc := tcpOf(conn.NetConn()); tc != nil {
		_ = tc.SetWriteBuffer(kernelSendBuffer)
	}
}

// tcpOf is the TCP connection under nc's wrappers, nil when there is none.
func tcpOf(nc net.Conn) *net.TCPConn {
	for {
		switch c := nc.(type) {
		case *net.TCPConn:
			return c
		case interface{ UnsafeConn() net.Conn }: // fasthttp's hijacked connection
			nc = c.UnsafeConn()
		case interface{ NetConn() net.Conn }: // the kernel's listener's, as tls.Conn's
			nc = c.NetConn()
		default:
			return nil
		}
	}
}

func (ss *sockets) add(sock *socket) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	select {
	case <-ss.stop:
		return false
	default:
	}
	u := ss.users[sock.userID]
	if u == nil {
		u = &userSockets{set: map[*socket]struct{}{}}
		ss.users[sock.userID] = u
	}
	u.set[sock] = struct{}{}
	ss.open.Add(1)
	ss.count.Add(1)
	return true
}

func (ss *sockets) remove(sock *socket) {
	ss.mu.Lock()
	if u := ss.users[sock.userID]; u != nil {
		delete(u.set, sock)
		if len(u.set) == 0 {
			delete(ss.users, sock.userID)
		}
	}
	ss.mu.Unlock()
	ss.count.Add(-1)
	ss.open.Done()
}

// initCursor records what the user had when a socket opened (opened).
func (ss *sockets) initCursor(userID string) {
	had, err := ss.svc.store.recent(context.Background(), userID, lateCommitWindow, catchUpLimit)
	if err != nil {
		ss.svc.Log.Error("read notifications for a new socket", "err", err)
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if u := ss.users[userID]; u != nil {
		u.opened(had)
	}
}

// read handles what the client sends: control frames (ping, pong, close)
// through the connection's handlers, {"type":"ping"} with a pong; anything
// else is ignored. A silent client is dropped after pongWait.
func (ss *sockets) read(sock *socket) {
	defer close(sock.done)
	c := sock.conn
	c.SetReadLimit(maxClientMessage)
	_ = c.SetReadDeadline(time.Now().Add(pongWait))
	c.SetPongHandler(func(string) error { return c.SetReadDeadline(time.Now().Add(pongWait)) })
	for {
		kind, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Now().Add(pongWait))
		if kind != websocket.TextMessage {
			continue
		}
		var msg struct{ Type string }
		if json.Unmarshal(data, &msg) == nil && msg.Type == clientPingType {
			pong := []byte(pongMessage)
			sock.send(&pong)
		}
	}
}

// write sends queued messages and pings until the socket is asked to close
// or the reader ends.
func (ss *sockets) write(sock *socket) {
	c := sock.conn
	ping := time.NewTicker(PingInterval)
	defer ping.Stop()
	for {
		select {
		case req := <-sock.closing:
			_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(req.code, req.reason), time.Now().Add(writeWait))
			return
		default:
		}
		select {
		case req := <-sock.closing:
			_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(req.code, req.reason), time.Now().Add(writeWait))
			return
		case <-sock.done:
			return
		case <-sock.wake:
			for _, m := range sock.take() {
				if sock.isKicked() {
					break
				}
				_ = c.SetWriteDeadline(time.Now().Add(writeWait))
				if err := c.WriteMessage(websocket.TextMessage, *m); err != nil {
					return
				}
			}
		case <-ping.C:
			if err := c.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)); err != nil {
				return
			}
		}
	}
}

// Deliver pushes notifications announced by any node to the owners'
// sockets on this node (notify.Receiver). Messages are read only for users
// connected here, once each however many of them they are for.
func (s *Service) Deliver(items []notify.Item) {
	ctx := db.WithoutTx(context.Background())
	members := map[string][]string{}
	for _, it := range items {
		if _, ok := members[it.Audience]; ok || it.Audience == "" {
			continue
		}
		m, err := s.store.members(ctx, it.Audience)
		if err != nil {
			s.Log.Error("read the audience of notifications to push", "err", err)
		}
		members[it.Audience] = m
	}
	ss := s.sockets
	ss.mu.Lock()
	var ids []string
	owners := map[string][]string{}
	own := func(id, u string) {
		if owners[id] == nil {
			ids = append(ids, id)
		}
		owners[id] = append(owners[id], u)
	}
	for _, it := range items {
		for _, u := range it.UserIDs {
			if _, ok := ss.users[u]; ok {
				own(it.ID, u)
			}
		}
		// Whichever is shorter is walked: the audience, or the users
		// connected here.
		if m := members[it.Audience]; len(m) <= len(ss.users) {
			for _, u := range m {
				if _, ok := ss.users[u]; ok && u != it.Except {
					own(it.ID, u)
				}
			}
		} else {
			for u := range ss.users {
				if _, in := slices.BinarySearch(m, u); in && u != it.Except {
					own(it.ID, u)
				}
			}
		}
	}
	ss.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	msgs, err := s.store.messages(ctx, ids)
	if err != nil {
		s.Log.Error("read notifications to push", "err", err)
		return
	}
	var rows []Notification
	for _, id := range ids {
		m, ok := msgs[id]
		if !ok {
			continue // purged meanwhile
		}
		for _, u := range owners[id] {
			m.UserID = u
			rows = append(rows, m)
		}
	}
	ss.push(rows, false)
}

// Resync catches up after the listener reconnected: each connected user
// gets what was stored while it was away and not pushed yet, including rows
// that committed late with an older time (notify.Receiver).
func (s *Service) Resync() {
	ss := s.sockets
	ss.mu.Lock()
	cursors := make(map[string]time.Time, len(ss.users))
	for id, u := range ss.users {
		cursors[id] = u.catchUpFrom()
	}
	ss.mu.Unlock()
	users := make([]string, 0, len(cursors))
	for id := range cursors {
		users = append(users, id)
	}
	slices.Sort(users)
	for _, u := range users {
		rows, err := s.store.since(context.Background(), u, cursors[u], catchUpLimit)
		if err != nil {
			s.Log.Error("catch up notifications", "err", err)
			return
		}
		ss.push(rows, true)
	}
}

// push sends rows to their owners' sockets, oldest first; with onlyNew,
// rows not newer than what a user was already pushed are skipped.
func (ss *sockets) push(rows []Notification, onlyNew bool) {
	slices.SortFunc(rows, func(a, b Notification) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, n := range rows {
		u := ss.users[n.UserID]
		// A live push and a catch-up may bring the same row: it goes once.
		if u == nil || u.pushedAlready(n) || (onlyNew && !u.isNew(n)) {
			continue
		}
		u.advance(n)
		d := toDTO(n)
		msg, err := json.Marshal(Push{Type: pushNotification, Data: &d})
		if err != nil {
			continue
		}
		for sock := range u.set {
			sock.send(&msg)
		}
	}
}

// watch closes, within identity.cacheSyncInterval, the sockets whose user
// was disabled or whose security stamp changed, on any node: it reads the
// stamps of the connected users from the database each half interval.
func (ss *sockets) watch() {
	defer ss.watching.Done()
	every := max(ss.svc.Sessions.SyncInterval()/2, 50*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ss.stop:
			return
		case <-t.C:
		}
		ss.mu.Lock()
		users := make([]string, 0, len(ss.users))
		for id := range ss.users {
			users = append(users, id)
		}
		ss.mu.Unlock()
		if len(users) == 0 {
			continue
		}
		stamps, err := ss.svc.Sessions.ActiveStamps(context.Background(), users)
		if err != nil {
			ss.svc.Log.Warn("notification sockets: check sign-ins", "err", err)
			continue
		}
		ss.mu.Lock()
		for id, u := range ss.users {
			stamp, active := stamps[id]
			for sock := range u.set {
				if !active || stamp != sock.stamp {
					sock.kick(closePolicy, reasonSignedOut)
				}
			}
		}
		ss.mu.Unlock()
	}
}

// Start begins watching sign-ins.
func (s *Service) Start() {
	s.sockets.watching.Add(1)
	go s.sockets.watch()
}

// Stop closes every socket with 1001 (going away) and waits, up to ctx,
// for them to end.
func (s *Service) Stop(ctx context.Context) {
	ss := s.sockets
	ss.stopOnce.Do(func() { close(ss.stop) })
	ss.watching.Wait()
	ss.mu.Lock()
	for _, u := range ss.users {
		for sock := range u.set {
			sock.kick(closeGoingAway, reasonStopping)
		}
	}
	ss.mu.Unlock()
	done := make(chan struct{})
	go func() {
		ss.open.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
