package notifications_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	_ "github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/notifications" // the module under test
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/notify"
	"github.com/contractflow/contractflow/platform/testkit"
)

var t0 = time.Date(2026, 3, 10, 2, 0, 0, 0, time.UTC)

// env is one running instance with an administrator, listening on a real
// port so that WebSocket clients can connect.
type env struct {
	app    *testkit.App
	driver string
	admin  string
	addr   string
}

func start(t *testing.T, driver string, opts ...testkit.Option) *env {
	t.Helper()
	all := append([]testkit.Option{
		testkit.WithClock(clock.NewManual(t0)),
		testkit.WithConfig("jwt.accessTokenMinutes", 60*24*365),
		testkit.WithConfig("rateLimit.enabled", false),
		testkit.WithConfig("modules.forms.enabled", false),
	}, opts...)
	app := identitytest.Start(t, driver, all...)
	e := &env{app: app, driver: driver, admin: identitytest.AdminToken(t, app)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	go func() { _ = app.Kernel.HTTP().Listener(ln) }()
	t.Cleanup(func() { _ = app.Kernel.HTTP().ShutdownWithTimeout(5 * time.Second) })
	return e
}

// secondNode starts another instance on e's database, as a second node.
func secondNode(t *testing.T, e *env) *env {
	t.Helper()
	cfg := e.app.Kernel.App().Config
	return start(t, e.driver, testkit.WithConfig("database.dsn", cfg.Database.DSN), testkit.WithConfig("storage.path", cfg.Storage.Path))
}

func (e *env) do(method, path, token string, body any) *testkit.Response {
	return e.app.Do(testkit.Request{Method: method, Path: path, Token: token, Body: body})
}

type user struct{ id, email, token string }

func (e *env) user(t testing.TB, roles ...string) user {
	t.Helper()
	id, email, token := identitytest.NewUser(t, e.app, roles...)
	return user{id: id, email: email, token: token}
}

// notification is the API's notification.
type notification struct {
	ID, UserID, Kind, Title, Body, EntityType, EntityID string
	ReadAt                                              *time.Time
	CreatedAt                                           time.Time
}

type page struct {
	Items                                  []notification
	Page, PageSize, TotalCount, TotalPages int
}

func (e *env) list(t testing.TB, token, query string) page {
	t.Helper()
	r := e.do("GET", "/api/notifications"+query, token, nil)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var p page
	r.JSON(t, &p)
	return p
}

func (e *env) unread(t testing.TB, token string) int {
	t.Helper()
	r := e.do("GET", "/api/notifications/unread-count", token, nil)
	if r.Status != 200 {
		t.Fatalf("unread count: %d %s", r.Status, r.Body)
	}
	var out struct{ Count int }
	r.JSON(t, &out)
	return out.Count
}

// kinds lists the kinds of a user's notifications about entity.
func (e *env) kinds(t testing.TB, token, entity string) []string {
	t.Helper()
	out := []string{}
	for _, n := range e.list(t, token, "?pageSize=100").Items {
		if n.EntityID == entity {
			out = append(out, n.Kind)
		}
	}
	return out
}

// said is a test event that notifies whom its drafts say.
type said struct{ drafts []notify.Draft }

func (said) Topic() string                   { return "test.said" }
func (s said) Notifications() []notify.Draft { return s.drafts }
func draft(users ...string) notify.Draft     { return draftAbout(uuidLike(), users...) }
func draftAbout(entity string, users ...string) notify.Draft {
	return notify.Draft{Kind: "test.said", Title: "Hello", Body: "A test notification.", EntityType: "test",
		EntityID: entity, UserIDs: users}
}

// entitySeq is shared by the parallel tests.
var entitySeq atomic.Int64

func uuidLike() string {
	return fmt.Sprintf("00000000-0000-7000-8000-%012d", entitySeq.Add(1))
}

// say publishes drafts the way a producer does: inside a transaction.
func (e *env) say(t testing.TB, drafts ...notify.Draft) {
	t.Helper()
	a := e.app.Kernel.App()
	err := a.DB.InTx(context.Background(), func(ctx context.Context) error {
		return a.Bus.Publish(ctx, said{drafts: drafts})
	})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// ticket asks for a WebSocket ticket.
func (e *env) ticket(t testing.TB, token string) string {
	t.Helper()
	r := e.do("POST", "/api/notifications/ws-ticket", token, nil)
	if r.Status != 200 {
		t.Fatalf("ws-ticket: %d %s", r.Status, r.Body)
	}
	var out struct{ Ticket string }
	r.JSON(t, &out)
	return out.Ticket
}

// dial opens the socket with ticket; the response is the handshake's.
func (e *env) dial(ticket string, header http.Header) (*websocket.Conn, *http.Response, error) {
	u := url.URL{Scheme: "ws", Host: e.addr, Path: "/api/notifications/ws", RawQuery: "ticket=" + url.QueryEscape(ticket)}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, NetDialContext: smallWindow.DialContext}
	return d.Dial(u.String(), header)
}

// smallWindow dials with a small receive buffer, so that a client that
// stops reading stops the server's writes after a few kilobytes rather than
// after the megabytes loopback buffers hold.
var smallWindow = &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8192)
	}); cerr != nil {
		return cerr
	}
	return err
}}

// connect opens a socket for token, failing the test otherwise.
func (e *env) connect(t testing.TB, token string) *websocket.Conn {
	t.Helper()
	c, resp, err := e.dial(e.ticket(t, token), nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial: %v (status %d)", err, status)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type push struct {
	Type string
	Data notification
}

// next reads the next push within timeout.
func next(t testing.TB, c *websocket.Conn, timeout time.Duration) push {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read push: %v", err)
	}
	var p push
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("push is not JSON: %s", data)
	}
	return p
}

// closedWith reads until the socket closes and returns the close code and
// how many messages came before it.
func closedWith(t testing.TB, c *websocket.Conn, timeout time.Duration) (code, messages int) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			messages++
			continue
		}
		var ce *websocket.CloseError
		if ok := asCloseError(err, &ce); ok {
			return ce.Code, messages
		}
		t.Fatalf("socket ended without a close frame after %d messages: %v", messages, err)
	}
}

func asCloseError(err error, out **websocket.CloseError) bool {
	ce, ok := err.(*websocket.CloseError)
	if ok {
		*out = ce
	}
	return ok
}

// eventually polls cond for up to 10 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// masterdata creates a supplier or project as the administrator.
func (e *env) masterdata(t testing.TB, path string, body map[string]any) string {
	t.Helper()
	r := e.do("POST", path, e.admin, body)
	if r.Status != 201 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	var out struct{ ID string }
	r.JSON(t, &out)
	return out.ID
}

var contractSeq int

// contract drafts a contract as token, with fresh master data.
func (e *env) contract(t testing.TB, token string) string {
	t.Helper()
	contractSeq++
	supplier := e.masterdata(t, "/api/suppliers", map[string]any{"code": fmt.Sprintf("NCC%03d", contractSeq), "name": "Supplier", "supplierType": "Material"})
	project := e.masterdata(t, "/api/projects", map[string]any{"code": fmt.Sprintf("DA%03d", contractSeq), "name": "Project"})
	r := e.do("POST", "/api/contracts", token, map[string]any{"title": fmt.Sprintf("Hợp đồng %d", contractSeq),
		"contractType": "Subcontract", "supplierId": supplier, "projectId": project, "value": 1500000})
	if r.Status != 201 {
		t.Fatalf("create contract: %d %s", r.Status, r.Body)
	}
	var out struct{ ID string }
	r.JSON(t, &out)
	return out.ID
}

func (e *env) move(t testing.TB, token, id, to string, want int) {
	t.Helper()
	r := e.do("POST", "/api/contracts/"+id+"/transitions", token, map[string]any{"toPhase": to})
	if r.Status != want {
		t.Fatalf("move %s to %s: %d, want %d: %s", id, to, r.Status, want, r.Body)
	}
}

// schema is the Postgres schema of the instance's DSN.
// killListeners terminates the LISTEN connections of the nodes on e's
// schema once want of them are listening: a node's listener connects in
// the background, so on a loaded machine it may not be there yet.
func (e *env) killListeners(t testing.TB, want int) {
	t.Helper()
	conn := e.app.Kernel.App().DB.Conn(context.Background())
	const where = `FROM pg_stat_activity WHERE application_name = 'contractflow-notify' AND query LIKE ?`
	pattern := "LISTEN%" + e.schema() + "%"
	eventually(t, fmt.Sprintf("%d listeners", want), func() bool {
		var n int
		return conn.Raw(`SELECT count(*) `+where, pattern).Scan(&n).Error == nil && n == want
	})
	var killed []bool
	if err := conn.Raw(`SELECT pg_terminate_backend(pid) `+where, pattern).Scan(&killed).Error; err != nil || len(killed) != want {
		t.Fatalf("killed %v listeners, want %d: %v", killed, want, err)
	}
}

func (e *env) schema() string {
	dsn := e.app.Kernel.App().Config.Database.DSN
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(u.Query().Get("search_path"))
}
