package notifications_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/notify"
	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/testkit"
)

// The five endpoints: the caller's own notifications, paged and filtered;
// another user's are unknown; no token is 401.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := start(t, driver)
		ann, bob := e.user(t), e.user(t)
		for range 3 {
			e.say(t, draft(ann.id))
		}
		e.say(t, draft(bob.id))

		p := e.list(t, ann.token, "?pageSize=2")
		if p.TotalCount != 3 || p.TotalPages != 2 || len(p.Items) != 2 || p.Items[0].UserID != ann.id || p.Items[0].ReadAt != nil {
			t.Fatalf("first page %+v", p)
		}
		if p2 := e.list(t, ann.token, "?pageSize=2&page=2"); len(p2.Items) != 1 || p2.Items[0].ID == p.Items[0].ID {
			t.Fatalf("second page %+v", p2)
		}
		if e.unread(t, ann.token) != 3 || e.unread(t, bob.token) != 1 {
			t.Fatal("unread counts")
		}
		first := p.Items[0]
		var bobs string

		e.app.Run(t, []testkit.Scenario{
			{Name: "read one", Request: testkit.Request{Method: "POST", Path: "/api/notifications/" + first.ID + "/read", Token: ann.token}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var n notification
					r.JSON(t, &n)
					if n.ID != first.ID || n.ReadAt == nil {
						t.Errorf("read %+v", n)
					}
				}},
			{Name: "read it again changes nothing", Request: testkit.Request{Method: "POST", Path: "/api/notifications/" + first.ID + "/read", Token: ann.token}, Status: 200},
			{Name: "another user's notification is unknown", Request: testkit.Request{Method: "POST", Path: "/api/notifications/" + first.ID + "/read", Token: bob.token}, Status: 404, Code: "not_found"},
			{Name: "a malformed id is unknown", Request: testkit.Request{Method: "POST", Path: "/api/notifications/nope/read", Token: ann.token}, Status: 404, Code: "not_found"},
			{Name: "unreadOnly must be a boolean", Request: testkit.Request{Method: "GET", Path: "/api/notifications?unreadOnly=maybe", Token: ann.token}, Status: 400, Fields: []string{"UnreadOnly"}},
			{Name: "unknown sort", Request: testkit.Request{Method: "GET", Path: "/api/notifications?sort=title", Token: ann.token}, Status: 400, Fields: []string{"Sort"}},
			{Name: "list without a token", Request: testkit.Request{Method: "GET", Path: "/api/notifications"}, Status: 401},
			{Name: "count without a token", Request: testkit.Request{Method: "GET", Path: "/api/notifications/unread-count"}, Status: 401},
			{Name: "read without a token", Request: testkit.Request{Method: "POST", Path: "/api/notifications/" + first.ID + "/read"}, Status: 401},
			{Name: "read-all without a token", Request: testkit.Request{Method: "POST", Path: "/api/notifications/read-all"}, Status: 401},
			{Name: "ticket without a token", Request: testkit.Request{Method: "POST", Path: "/api/notifications/ws-ticket"}, Status: 401},
		})
		if got := e.list(t, ann.token, "?unreadOnly=true"); got.TotalCount != 2 || slices.ContainsFunc(got.Items, func(n notification) bool { return n.ID == first.ID }) {
			t.Fatalf("unread only %+v", got)
		}
		if e.list(t, bob.token, "").Items[0].ReadAt != nil {
			t.Fatal("ann's read marked bob's")
		}
		bobs = e.list(t, bob.token, "").Items[0].ID
		r := e.do("POST", "/api/notifications/read-all", ann.token, nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"updated":2`) {
			t.Fatalf("read-all: %d %s", r.Status, r.Body)
		}
		if e.unread(t, ann.token) != 0 || e.list(t, ann.token, "?unreadOnly=true").TotalCount != 0 || e.unread(t, bob.token) != 1 {
			t.Fatal("after read-all")
		}
		if r := e.do("POST", "/api/notifications/"+bobs+"/read", ann.token, nil); r.Status != 404 {
			t.Fatalf("ann reads bob's: %d", r.Status)
		}
	})
}

// A move notifies the new phase's inbox users and the drafter, never the
// actor, with one message however many they are; a move undone by a later
// subscriber notifies no one.
func TestContractMoves(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := start(t, driver)
		drafter := e.user(t, "Drafter")
		manager := e.user(t, "DeptManager")
		pms := []user{e.user(t, "ProjectManager"), e.user(t, "ProjectManager"), e.user(t, "ProjectManager", "Director")}
		outsider := e.user(t, "Director")
		id := e.contract(t, drafter.token)

		gdb := e.app.Kernel.App().DB.Conn(context.Background())
		stored := func() (messages, recipients int64) {
			t.Helper()
			if err := gdb.Raw(`SELECT COUNT(*) FROM notification_messages WHERE entity_id = ?`, id).Scan(&messages).Error; err != nil {
				t.Fatal(err)
			}
			if err := gdb.Raw(`SELECT COUNT(*) FROM notification_recipients r JOIN notification_messages m ON m.id = r.message_id
				WHERE m.entity_id = ?`, id).Scan(&recipients).Error; err != nil {
				t.Fatal(err)
			}
			return messages, recipients
		}

		// The administrator moves it on: the drafter and the other users of
		// the new inbox (Drafter, DeptManager) hear of it.
		e.move(t, e.admin, id, "DangDamPhan", 200)
		if got := e.kinds(t, drafter.token, id); !slices.Equal(got, []string{"contract.transitioned"}) {
			t.Fatalf("drafter's notifications %v", got)
		}
		if got := e.kinds(t, manager.token, id); len(got) != 1 {
			t.Fatalf("manager's notifications %v", got)
		}
		// The manager moves it to DangGopY: the project managers and the
		// drafter hear of it, the manager does not.
		msgs, rcpts := stored()
		e.move(t, manager.token, id, "DangGopY", 200)
		// One message: the project managers through their audience, the
		// drafter by one recipient row.
		if m, r := stored(); m-msgs != 1 || r-rcpts != 1 {
			t.Errorf("one move stored %d messages and %d recipient rows, want 1 and 1", m-msgs, r-rcpts)
		}
		for _, u := range append(pms, drafter) {
			if got := e.kinds(t, u.token, id); len(got) == 0 || got[0] != "contract.transitioned" {
				t.Errorf("user %s: %v", u.email, got)
			}
		}
		if got := e.kinds(t, manager.token, id); len(got) != 1 {
			t.Errorf("the actor was notified of their own move: %v", got)
		}
		if got := e.kinds(t, outsider.token, id); len(got) != 0 {
			t.Errorf("a user outside the inbox was notified: %v", got)
		}
		n := e.list(t, pms[0].token, "").Items[0]
		if n.EntityType != "contract" || n.Title == "" || !strings.Contains(n.Body, "DangGopY") {
			t.Errorf("notification %+v", n)
		}

		// A subscriber after the notifications refuses the next move: it is
		// rolled back with its notifications.
		var refuse atomic.Bool
		e.app.Kernel.App().Bus.SubscribeAll(events.InTx, func(_ context.Context, ev events.Event) error {
			if refuse.Load() && ev.Topic() == "contract.transitioned" {
				return apperr.Conflict("invalid_transition", "Refused by the test.")
			}
			return nil
		})
		refuse.Store(true)
		e.move(t, pms[0].token, id, "DangInKy", 409)
		if got := e.kinds(t, drafter.token, id); len(got) != 2 {
			t.Errorf("a refused move notified the drafter: %v", got)
		}
		refuse.Store(false)

		// A comment tells the drafter and the phase's inbox, not its author.
		r := e.do("POST", "/api/contracts/"+id+"/comments", pms[0].token, map[string]any{"content": "Xem lại điều 3."})
		if r.Status != 201 {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
		if got := e.kinds(t, drafter.token, id); !slices.Contains(got, "contract.commented") {
			t.Errorf("drafter after a comment: %v", got)
		}
		if got := e.kinds(t, pms[1].token, id); !slices.Contains(got, "contract.commented") {
			t.Errorf("inbox after a comment: %v", got)
		}
		if got := e.kinds(t, pms[0].token, id); slices.Contains(got, "contract.commented") {
			t.Errorf("the author was notified of their comment: %v", got)
		}

		// The SLA job moves it on as the system: contract.autoAdvanced.
		e.app.Clock.Advance(73 * time.Hour)
		for _, j := range e.app.Kernel.Jobs() {
			if j.Name == "workflow.sla" {
				if err := j.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := e.kinds(t, drafter.token, id); !slices.Contains(got, "contract.autoAdvanced") {
			t.Errorf("drafter after the SLA job: %v", got)
		}
	})
}

// Tickets work once, for 30 s, for their user; anything else is 401 and no
// socket.
func TestTickets(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := start(t, driver)
		u := e.user(t)
		refused := func(t *testing.T, ticket string, header http.Header) {
			t.Helper()
			c, resp, err := e.dial(ticket, header)
			if err == nil {
				_ = c.Close()
				t.Fatal("the socket opened")
			}
			if !errors.Is(err, websocket.ErrBadHandshake) || resp == nil {
				t.Fatalf("dial: %v", err)
			}
			if want := http.StatusUnauthorized; header != nil {
				if resp.StatusCode != http.StatusForbidden {
					t.Fatalf("status %d, want 403", resp.StatusCode)
				}
			} else if resp.StatusCode != want {
				t.Fatalf("status %d, want %d", resp.StatusCode, want)
			}
		}
		t.Run("used twice", func(t *testing.T) {
			ticket := e.ticket(t, u.token)
			c, _, err := e.dial(ticket, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.Close()
			refused(t, ticket, nil)
		})
		t.Run("late", func(t *testing.T) {
			ticket := e.ticket(t, u.token)
			e.app.Clock.Advance(31 * time.Second)
			refused(t, ticket, nil)
		})
		t.Run("forged", func(t *testing.T) { refused(t, "bm90LWEtdGlja2V0", nil) })
		t.Run("missing", func(t *testing.T) { refused(t, "", nil) })
		t.Run("issued before the password changed", func(t *testing.T) {
			v := e.user(t)
			ticket := e.ticket(t, v.token)
			r := e.do("POST", "/api/users/"+v.id+"/reset-password", e.admin, map[string]any{"newPassword": "Another-Password-2026"})
			if r.Status != 204 && r.Status != 200 {
				t.Fatalf("reset: %d %s", r.Status, r.Body)
			}
			refused(t, ticket, nil)
		})
		t.Run("a foreign origin is refused before the ticket is spent", func(t *testing.T) {
			ticket := e.ticket(t, u.token)
			refused(t, ticket, http.Header{"Origin": {"https://evil.example"}})
			c, _, err := e.dial(ticket, http.Header{"Origin": {"http://" + e.addr}})
			if err != nil {
				t.Fatalf("same origin: %v", err)
			}
			_ = c.Close()
		})
		// The refusals match the OpenAPI document.
		ticket := e.ticket(t, u.token)
		upgrade := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
			"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
		e.app.Run(t, []testkit.Scenario{
			{Name: "no ticket", Request: testkit.Request{Method: "GET", Path: "/api/notifications/ws", Header: upgrade}, Status: 401, Code: "token_invalid"},
			{Name: "forged ticket", Request: testkit.Request{Method: "GET", Path: "/api/notifications/ws?ticket=forged", Header: upgrade}, Status: 401, Code: "token_invalid"},
			{Name: "not a WebSocket request", Request: testkit.Request{Method: "GET", Path: "/api/notifications/ws?ticket=" + ticket}, Status: 400, Fields: []string{"Upgrade"}},
		})
		// The plain GET did not spend it.
		c, _, err := e.dial(ticket, nil)
		if err != nil {
			t.Fatalf("ticket spent by a refused request: %v", err)
		}
		_ = c.Close()
	})
}

// A socket gets its user's notifications pushed, answers pings, ignores
// anything else, and is closed when it falls behind, when its user is
// disabled, and when the server stops.
func TestSockets(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := start(t, driver)
		t.Run("push, ping, noise", func(t *testing.T) {
			u, other := e.user(t), e.user(t)
			c := e.connect(t, u.token)
			if err := c.WriteMessage(websocket.TextMessage, []byte("hello?")); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"ping"}`)); err != nil {
				t.Fatal(err)
			}
			if p := next(t, c, 5*time.Second); p.Type != "pong" {
				t.Fatalf("answer to a ping: %+v", p)
			}
			e.say(t, draft(other.id))
			e.say(t, draft(u.id))
			p := next(t, c, 5*time.Second)
			if p.Type != "notification" || p.Data.UserID != u.id || p.Data.Kind != "test.said" || p.Data.ID == "" {
				t.Fatalf("push %+v", p)
			}
			if got := e.list(t, u.token, "").Items[0].ID; got != p.Data.ID {
				t.Fatalf("pushed %s, stored %s", p.Data.ID, got)
			}
		})
		t.Run("a socket 256 messages behind is closed with 1008", func(t *testing.T) {
			u := e.user(t)
			c := e.connect(t, u.token)
			big := strings.Repeat("x", 2000)
			drafts := make([]notify.Draft, 0, 3000)
			for range 3000 {
				d := draft(u.id)
				d.Body = big
				drafts = append(drafts, d)
			}
			// The client reads nothing while every node delivers (on Postgres
			// the news comes in NOTIFY payloads of some hundred ids each).
			e.say(t, drafts...)
			time.Sleep(3 * time.Second)
			code, n := closedWith(t, c, 30*time.Second)
			if code != websocket.ClosePolicyViolation || n >= 3000 {
				t.Fatalf("closed with %d after %d messages", code, n)
			}
			if got := e.list(t, u.token, "?pageSize=1").TotalCount; got != 3000 {
				t.Fatalf("%d stored, want 3000: nothing is lost", got)
			}
		})
		t.Run("disabling the user closes the socket", func(t *testing.T) {
			u := e.user(t)
			c := e.connect(t, u.token)
			r := e.do("PUT", "/api/users/"+u.id, e.admin, map[string]any{"fullName": "Gone", "isActive": false})
			if r.Status != 200 {
				t.Fatalf("disable: %d %s", r.Status, r.Body)
			}
			if code, _ := closedWith(t, c, 20*time.Second); code != websocket.ClosePolicyViolation {
				t.Fatalf("closed with %d", code)
			}
		})
		t.Run("a role change closes the socket", func(t *testing.T) {
			u := e.user(t, "Drafter")
			c := e.connect(t, u.token)
			r := e.do("PUT", "/api/users/"+u.id+"/roles", e.admin, map[string]any{"roles": []string{"Director"}})
			if r.Status != 200 {
				t.Fatalf("roles: %d %s", r.Status, r.Body)
			}
			if code, _ := closedWith(t, c, 20*time.Second); code != websocket.ClosePolicyViolation {
				t.Fatalf("closed with %d", code)
			}
		})
	})
}

// Stopping the service closes the sockets cleanly (1001).
func TestStopClosesSockets(t *testing.T) {
	t.Parallel()
	e := start(t, "sqlite")
	u := e.user(t)
	c := e.connect(t, u.token)
	done := make(chan int)
	go func() {
		code, _ := closedWith(t, c, 10*time.Second)
		done <- code
	}()
	if err := e.app.Kernel.HTTP().ShutdownWithTimeout(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := e.app.Kernel.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != websocket.CloseGoingAway {
		t.Fatalf("closed with %d, want 1001", code)
	}
}

// Two nodes on one Postgres: a move on node A reaches a socket on node B,
// also after the listeners' connections are killed.
func TestTwoNodes(t *testing.T) {
	t.Parallel()
	if !slices.Contains(testkit.Drivers(), "postgres") {
		t.Skip("needs " + testkit.PostgresDSNEnv)
	}
	a := start(t, "postgres")
	b := secondNode(t, a)
	drafter := a.user(t, "Drafter")
	pm := a.user(t, "ProjectManager")
	id := a.contract(t, drafter.token)
	a.move(t, drafter.token, id, "DangDamPhan", 200)
	c := b.connect(t, pm.token)
	a.move(t, drafter.token, id, "DangGopY", 200)
	if p := next(t, c, 5*time.Second); p.Data.EntityID != id || p.Data.Kind != "contract.transitioned" {
		t.Fatalf("push on node B %+v", p)
	}

	// Kill the listeners of both nodes, then notify at once: what was
	// stored while they were away arrives after they reconnect.
	a.killListeners(t, 2)
	a.say(t, draft(pm.id))
	if p := next(t, c, 10*time.Second); p.Data.Kind != "test.said" {
		t.Fatalf("after the listener was killed: %+v", p)
	}
	// And the path of live pushes works again.
	a.say(t, draft(pm.id))
	if p := next(t, c, 10*time.Second); p.Data.Kind != "test.said" {
		t.Fatalf("after the reconnection: %+v", p)
	}
}

// Notifications older than notifications.retentionDays are deleted by the
// retention job.
func TestRetention(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := start(t, driver, testkit.WithConfig("notifications.retentionDays", 30))
		u := e.user(t)
		e.say(t, draft(u.id))
		e.app.Clock.Advance(29 * 24 * time.Hour)
		e.say(t, draft(u.id))
		e.app.Clock.Advance(2 * 24 * time.Hour)
		ran := false
		for _, j := range e.app.Kernel.Jobs() {
			if j.Name == "notifications.retention" {
				ran = true
				if err := j.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !ran {
			t.Fatal("no retention job")
		}
		if got := e.list(t, u.token, "").TotalCount; got != 1 {
			t.Fatalf("%d kept, want the one younger than 30 days", got)
		}
	})
}

// Every route of the module is documented, and every documented operation
// under its paths is served.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	e := start(t, "sqlite")
	doc, err := e.app.Kernel.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := openapi.Operations(doc)
	if err != nil {
		t.Fatal(err)
	}
	var documented, mounted []string
	for _, op := range ops {
		if strings.HasPrefix(op.Path, "/api/notifications") {
			documented = append(documented, op.String())
		}
	}
	for _, r := range e.app.Kernel.Routes() {
		if r.Module == "notifications" {
			mounted = append(mounted, r.Method+" "+openapi.OpenAPIPath(r.Path))
		}
	}
	slices.Sort(documented)
	slices.Sort(mounted)
	if !slices.Equal(documented, mounted) || len(mounted) != 6 {
		t.Errorf("documented %v\nmounted    %v", documented, mounted)
	}
}

// A notification whose transaction committed while the listener was away,
// after a newer one had been pushed (its time is older), still reaches the
// socket when the listener has reconnected, and only once. Every wait is
// an upper bound of 30 s: under the full suite's load the first live push
// once took more than 5 s. A row pushed twice still shows at once, as the
// next push read.
func TestCatchUpLateCommit(t *testing.T) {
	t.Parallel()
	if !slices.Contains(testkit.Drivers(), "postgres") {
		t.Skip("needs " + testkit.PostgresDSNEnv)
	}
	a := start(t, "postgres")
	u := a.user(t)
	c := a.connect(t, u.token)
	a.say(t, draftAbout("first", u.id))
	if p := next(t, c, 30*time.Second); p.Data.EntityID != "first" {
		t.Fatalf("live push %+v", p)
	}
	a.killListeners(t, 1)
	a.app.Clock.Advance(-10 * time.Second) // its transaction began before "first" was stored
	a.say(t, draftAbout("late", u.id))
	if p := next(t, c, 30*time.Second); p.Data.EntityID != "late" {
		t.Fatalf("after the reconnection %+v", p)
	}
	a.app.Clock.Advance(time.Minute)
	a.say(t, draftAbout("after", u.id))
	if p := next(t, c, 30*time.Second); p.Data.EntityID != "after" {
		t.Fatalf("a row was pushed twice, or the live path is gone: %+v", p)
	}
}
