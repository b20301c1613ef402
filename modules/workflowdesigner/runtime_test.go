package workflowdesigner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/sequence"
	"github.com/contractflow/contractflow/platform/testkit"
)

// gadgets is a made-up document kind of three phases, a guard and a
// precondition, owned by a test module with tables of its own: everything
// a new kind needs is what this file declares, and the runtime does the rest.
type gadgets struct {
	app *kernel.App
	eng workflowdesigner.Engine
}

type gadgetMoved struct {
	ID, From, To, Decision string
	Code                   *string
}

func (gadgetMoved) Topic() string { return "gadget.transitioned" }

type gadgetWarning struct{ ID, Phase string }

func (gadgetWarning) Topic() string { return "gadget.slaWarning" }

func (*gadgets) Info() kernel.Info {
	return kernel.Info{Name: "gadgets", Requires: []string{"workflowdesigner"}}
}

func (*gadgets) Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "gadgets", Up: migrate.SQL(
		`CREATE TABLE gadgets (
			id VARCHAR(36) PRIMARY KEY,
			owner_id VARCHAR(36) NOT NULL,
			urgent BOOLEAN NOT NULL,
			ready BOOLEAN NOT NULL,
			code VARCHAR(32) NULL,
			phase VARCHAR(32) NOT NULL,
			sla_deadline TIMESTAMP NULL,
			sla_warning_sent BOOLEAN NOT NULL DEFAULT FALSE,
			sla_reminded_at TIMESTAMP NULL,
			workflow_definition_id VARCHAR(36) NOT NULL,
			history_hash VARCHAR(64) NOT NULL DEFAULT '',
			version INTEGER NOT NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL,
			deleted_at TIMESTAMP NULL)`,
		`CREATE INDEX ix_gadgets_sla ON gadgets (sla_deadline) WHERE deleted_at IS NULL AND sla_deadline IS NOT NULL`,
		`CREATE TABLE gadget_history (
			id VARCHAR(36) PRIMARY KEY,
			gadget_id VARCHAR(36) NOT NULL REFERENCES gadgets (id),
			from_phase VARCHAR(32) NOT NULL,
			to_phase VARCHAR(32) NOT NULL,
			approver_user_id VARCHAR(36) NULL,
			decision VARCHAR(16) NOT NULL,
			comment TEXT NOT NULL,
			approved_at TIMESTAMP NOT NULL,
			hash VARCHAR(64) NOT NULL,
			prev_hash VARCHAR(64) NOT NULL)`,
		`CREATE TABLE gadget_code_sequences (prefix VARCHAR(64) PRIMARY KEY, last_seq INTEGER NOT NULL)`,
	)}}
}

// gadgetRemindSpec is gadgetSpec whose Draft step reminds instead of
// advancing; gadgetShortSpec has no Review step.
func gadgetRemindSpec() workflowdesigner.Spec {
	s := gadgetSpec()
	s.Key, s.Steps[0].OnSLABreach = "gadget-remind", workflowdesigner.BreachRemind
	return s
}

func gadgetShortSpec() workflowdesigner.Spec {
	return workflowdesigner.Spec{Key: "gadget-short", Name: "Short gadgets", InitialPhase: "Draft",
		Steps: []workflowdesigner.Step{{Phase: "Draft", SLAHours: 10, InboxRoles: []string{"Drafter"}}, {Phase: "Done", Terminal: true}},
		Transitions: []workflowdesigner.Transition{
			{From: "Draft", To: "Done", Kind: workflowdesigner.Forward, Roles: []string{"Drafter"}, Normal: true}}}
}

func gadgetSpec() workflowdesigner.Spec {
	return workflowdesigner.Spec{Key: "gadget-default", Name: "Gadgets", InitialPhase: "Draft",
		Steps: []workflowdesigner.Step{
			{Phase: "Draft", SLAHours: 10, InboxRoles: []string{"Drafter"}},
			{Phase: "Review", SLAHours: 5, InboxRoles: []string{"Director"}},
			{Phase: "Done", Terminal: true},
		},
		Transitions: []workflowdesigner.Transition{
			{From: "Draft", To: "Review", Kind: workflowdesigner.Forward, Roles: []string{"Drafter"}, Normal: true},
			{From: "Draft", To: "Done", Kind: workflowdesigner.Bypass, Roles: []string{"Drafter"}, Normal: true, Guard: "urgent"},
			{From: "Review", To: "Done", Kind: workflowdesigner.Forward, Roles: []string{"Director"}, Normal: true, Precondition: "ready"},
			{From: "Review", To: "Draft", Kind: workflowdesigner.Return, Roles: []string{"Director"}},
		}}
}

type gadget struct {
	ID, OwnerID, Phase, WorkflowDefinitionID, HistoryHash string
	Urgent, Ready                                         bool
	Code                                                  *string
	SLADeadline                                           *time.Time `gorm:"column:sla_deadline"`
	Version                                               int
}

func (g *gadgets) load(ctx context.Context, id string) (workflowdesigner.Document, error) {
	var r gadget
	err := g.app.DB.Conn(ctx).Table("gadgets").Where("id = ? AND deleted_at IS NULL", id).Take(&r).Error
	if err != nil {
		return workflowdesigner.Document{}, apperr.NotFound("Gadget")
	}
	return workflowdesigner.Document{ID: r.ID, Phase: r.Phase, DefinitionID: r.WorkflowDefinitionID, OwnerID: r.OwnerID,
		Deadline: r.SLADeadline, Version: r.Version, HistoryHash: r.HistoryHash,
		Facts: workflowdesigner.Facts{"urgent": r.Urgent}, Data: &r}, nil
}

func (g *gadgets) Provision(_ context.Context, app *kernel.App) error {
	eng, err := kernel.Need[workflowdesigner.Engine](app)
	if err != nil {
		return err
	}
	g.app, g.eng = app, eng
	eng.RegisterKind(workflowdesigner.Kind{Name: "gadget", Phases: []string{"Draft", "Review", "Done"},
		DocumentTypes: []string{"gadget", "gadget.remind", "gadget.short"}, Facts: []string{"urgent"},
		Defaults: []workflowdesigner.Default{{Spec: gadgetSpec(), AssignTo: []string{"gadget"}},
			{Spec: gadgetRemindSpec(), AssignTo: []string{"gadget.remind"}}, {Spec: gadgetShortSpec(), AssignTo: []string{"gadget.short"}}},
		Preconditions: []workflowdesigner.Precondition{{Name: "ready", Code: "gadget_not_ready",
			Check: func(_ context.Context, d workflowdesigner.Document) (string, error) {
				if !d.Data.(*gadget).Ready {
					return "The gadget is not ready.", nil
				}
				return "", nil
			}}},
		Tables: workflowdesigner.Tables{Documents: "gadgets", Owner: "owner_id", History: "gadget_history", Key: "gadget_id"},
		Load:   g.load,
		Transitioned: func(m *workflowdesigner.Moved) events.Event {
			e := gadgetMoved{ID: m.Doc.ID, From: m.From, To: m.To, Decision: m.Decision}
			if v, ok := m.Get("code"); ok {
				c := v.(string)
				e.Code = &c
			}
			return e
		},
		SLAWarning: func(d workflowdesigner.Document, _ []string) events.Event {
			return gadgetWarning{ID: d.ID, Phase: d.Phase}
		},
	})
	// The kind's own work in the move: a code on entering Done, and a
	// warning when review is skipped.
	eng.Hook("gadget", func(ctx context.Context, m *workflowdesigner.Moved) error {
		if m.Transition.Kind == workflowdesigner.Bypass {
			m.Warn("Review was skipped.")
		}
		if m.To != "Done" {
			return nil
		}
		n, err := sequence.Next(ctx, app.DB, "gadget_code_sequences", "G")
		if err != nil {
			return err
		}
		m.Set("code", fmt.Sprintf("G-%03d", n))
		return nil
	})
	return nil
}

// newGadget creates a gadget where the runtime says a new one starts.
func (g *gadgets) newGadget(t *testing.T, owner string, urgent, ready bool) workflowdesigner.Document {
	t.Helper()
	return g.newOf(t, "gadget", owner, urgent, ready)
}

func (g *gadgets) newOf(t *testing.T, docType, owner string, urgent, ready bool) workflowdesigner.Document {
	t.Helper()
	ctx := context.Background()
	start, err := g.eng.Start(ctx, docType)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.Must(uuid.NewV7()).String()
	err = g.app.DB.Conn(ctx).Exec(`INSERT INTO gadgets (id, owner_id, urgent, ready, phase, sla_deadline, workflow_definition_id, version, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)`, id, owner, urgent, ready, start.Phase, start.Deadline, start.Definition.ID, time.Now().UTC()).Error
	if err != nil {
		t.Fatal(err)
	}
	return g.doc(t, id)
}

func (g *gadgets) doc(t *testing.T, id string) workflowdesigner.Document {
	t.Helper()
	d, err := g.load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (g *gadgets) count(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := g.app.DB.Conn(context.Background()).Raw(query, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// startGadgets starts identity, the workflow module and the gadget kind
// on a manual clock.
func startGadgets(t *testing.T, d string, at time.Time, opts ...testkit.Option) (*gadgets, *testkit.App, *clock.Manual) {
	g := &gadgets{}
	clk := clock.NewManual(at)
	app := identitytest.Start(t, d, append([]testkit.Option{testkit.WithClock(clk), testkit.WithModules(
		func() kernel.Module { return identity.New() },
		func() kernel.Module { return workflowdesigner.New() },
		func() kernel.Module { return g },
	)}, opts...)...)
	return g, app, clk
}

// runSLA runs one batch of the SLA job.
func runSLA(t *testing.T, app *testkit.App) {
	t.Helper()
	for _, j := range app.Kernel.Jobs() {
		if j.Name == "workflow.sla" {
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no workflow.sla job")
}

func user(roles ...string) *authn.Principal {
	return &authn.Principal{UserID: uuid.Must(uuid.NewV7()).String(), Roles: roles}
}

// TestRuntimeMovesAMadeUpKind drives the gadget kind through every rule of
// the runtime, on both engines.
func TestRuntimeMovesAMadeUpKind(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		g, app, clk := startGadgets(t, d, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
		ctx := context.Background()
		var mu sync.Mutex
		var moved []gadgetMoved
		app.Kernel.App().Bus.Subscribe("gadget.transitioned", events.AfterCommit, func(_ context.Context, e events.Event) error {
			mu.Lock()
			defer mu.Unlock()
			moved = append(moved, e.(gadgetMoved))
			return nil
		})
		drafter, director := user("Drafter"), user("Director")
		move := func(doc workflowdesigner.Document, to string, by *authn.Principal, comment string) (*workflowdesigner.Moved, error) {
			return g.eng.Move(ctx, workflowdesigner.MoveRequest{Kind: "gadget", Doc: doc, To: to, By: by, Comment: comment})
		}

		t.Run("a move writes phase, deadline, history and event", func(t *testing.T) {
			doc := g.newGadget(t, drafter.UserID, false, false)
			if doc.Phase != "Draft" || doc.Deadline == nil || !doc.Deadline.Equal(clk.Now().Add(10*time.Hour)) {
				t.Fatalf("start %+v", doc)
			}
			m, err := move(doc, "Review", drafter, "")
			if err != nil {
				t.Fatal(err)
			}
			after := g.doc(t, doc.ID)
			if after.Phase != "Review" || after.Version != 2 || after.HistoryHash != m.Hash || m.Hash == "" ||
				!after.Deadline.Equal(clk.Now().Add(5*time.Hour)) || m.Decision != workflowdesigner.DecisionApprove {
				t.Fatalf("after %+v, moved %+v", after, m)
			}
			if n := g.count(t, "SELECT COUNT(*) FROM gadget_history WHERE gadget_id = ? AND prev_hash = '' AND approver_user_id = ?", doc.ID, drafter.UserID); n != 1 {
				t.Fatalf("%d history rows", n)
			}
		})

		t.Run("refusals are typed and write nothing", func(t *testing.T) {
			doc := g.newGadget(t, drafter.UserID, false, false)
			review, err := move(doc, "Review", drafter, "")
			if err != nil {
				t.Fatal(err)
			}
			_ = review
			inReview := g.doc(t, doc.ID)
			cases := []struct {
				name   string
				doc    workflowdesigner.Document
				to     string
				by     *authn.Principal
				is     error
				code   string
				status apperr.Kind
			}{
				{"no such pair", inReview, "Review", director, workflowdesigner.ErrNoSuchMove, "invalid_transition", apperr.KindConflict},
				{"guard does not hold", doc, "Done", drafter, workflowdesigner.ErrNoSuchMove, "invalid_transition", apperr.KindConflict},
				{"role not allowed", inReview, "Done", drafter, workflowdesigner.ErrMoveForbidden, "transition_forbidden", apperr.KindForbidden},
				{"precondition", inReview, "Done", director, workflowdesigner.ErrPreconditionFailed, "gadget_not_ready", apperr.KindConflict},
				{"stale document", doc, "Review", drafter, workflowdesigner.ErrStaleDocument, "invalid_transition", apperr.KindConflict},
			}
			for _, tc := range cases {
				_, err := move(tc.doc, tc.to, tc.by, "")
				if !errors.Is(err, tc.is) || apperr.CodeOf(err) != tc.code || apperr.KindOf(err) != tc.status {
					t.Errorf("%s: %v", tc.name, err)
				}
			}
			if _, err := move(inReview, "Draft", director, "  "); apperr.CodeOf(err) != "validation_failed" {
				t.Errorf("return without a comment: %v", err)
			} else if e, _ := apperr.As(err); len(e.Fields["Comment"]) == 0 {
				t.Errorf("return without a comment names %v", e.Fields)
			}
			if _, err := move(inReview, "Nowhere", director, ""); apperr.CodeOf(err) != "validation_failed" {
				t.Errorf("unknown phase: %v", err)
			}
			if n := g.count(t, "SELECT COUNT(*) FROM gadget_history WHERE gadget_id = ?", doc.ID); n != 1 {
				t.Errorf("%d history rows after refusals", n)
			}
			if now := g.doc(t, doc.ID); now.Phase != "Review" || now.Version != 2 {
				t.Errorf("refusals changed the gadget: %+v", now)
			}
		})

		t.Run("precondition, hook and guard", func(t *testing.T) {
			doc := g.newGadget(t, drafter.UserID, false, true)
			if _, err := move(doc, "Review", drafter, ""); err != nil {
				t.Fatal(err)
			}
			m, err := move(g.doc(t, doc.ID), "Done", director, "")
			if err != nil {
				t.Fatal(err)
			}
			done := g.doc(t, doc.ID)
			code := done.Data.(*gadget).Code
			if done.Phase != "Done" || done.Deadline != nil || code == nil || !strings.HasPrefix(*code, "G-") {
				t.Fatalf("done %+v code %v", done, code)
			}
			if v, _ := m.Get("code"); v != *code {
				t.Errorf("moved carries %v, stored %s", v, *code)
			}
			urgent := g.newGadget(t, drafter.UserID, true, false)
			m, err = move(urgent, "Done", drafter, "")
			if err != nil || m.Transition.Kind != workflowdesigner.Bypass || len(m.Warnings) != 1 {
				t.Fatalf("bypass: %v", err)
			}
			if n := g.count(t, "SELECT COUNT(*) FROM gadget_history WHERE gadget_id = ? AND comment = 'Warning: Review was skipped.'", urgent.ID); n != 1 {
				t.Error("the history row does not record the hook's warning")
			}
		})

		t.Run("a refusing hook undoes the move", func(t *testing.T) {
			doc := g.newGadget(t, drafter.UserID, true, false)
			seq := g.count(t, "SELECT COALESCE(MAX(last_seq), 0) FROM gadget_code_sequences")
			refuse := errors.New("refused")
			err := app.Kernel.App().DB.InTx(ctx, func(ctx context.Context) error {
				if _, err := g.eng.Move(ctx, workflowdesigner.MoveRequest{Kind: "gadget", Doc: doc, To: "Done", By: drafter}); err != nil {
					return err
				}
				return refuse // a later step of the caller's transaction fails
			})
			if !errors.Is(err, refuse) {
				t.Fatal(err)
			}
			if after := g.doc(t, doc.ID); after.Phase != "Draft" || after.HistoryHash != "" {
				t.Errorf("rolled back move left %+v", after)
			}
			if n := g.count(t, "SELECT COALESCE(MAX(last_seq), 0) FROM gadget_code_sequences"); n != seq {
				t.Errorf("sequence %d, was %d", n, seq)
			}
		})

		t.Run("concurrent moves: exactly one wins", func(t *testing.T) {
			doc := g.newGadget(t, drafter.UserID, false, false)
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := 0
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := move(doc, "Review", drafter, ""); err == nil {
						mu.Lock()
						wins++
						mu.Unlock()
					} else if !errors.Is(err, workflowdesigner.ErrStaleDocument) && apperr.KindOf(err) != apperr.KindConflict {
						t.Errorf("loser: %v", err)
					}
				}()
			}
			wg.Wait()
			if wins != 1 || g.count(t, "SELECT COUNT(*) FROM gadget_history WHERE gadget_id = ?", doc.ID) != 1 {
				t.Fatalf("%d winners", wins)
			}
		})

		t.Run("visibility and inbox", func(t *testing.T) {
			owner := user("Drafter")
			doc := g.newGadget(t, owner.UserID, false, false)
			if _, err := move(doc, "Review", owner, ""); err != nil {
				t.Fatal(err)
			}
			doc = g.doc(t, doc.ID)
			for _, p := range []*authn.Principal{owner, director, {UserID: "x", Roles: []string{"Admin"}}} {
				if _, err := g.eng.CanSee(ctx, *p, doc); err != nil {
					t.Errorf("%v cannot see: %v", p.Roles, err)
				}
			}
			if _, err := g.eng.CanSee(ctx, *user("Drafter"), doc); apperr.KindOf(err) != apperr.KindForbidden {
				t.Errorf("another drafter sees it: %v", err)
			}
			countWhere := func(cond string, args []any) int64 {
				return g.count(t, "SELECT COUNT(*) FROM gadgets WHERE deleted_at IS NULL AND id = ? AND "+cond, append([]any{doc.ID}, args...)...)
			}
			for _, tc := range []struct {
				p              authn.Principal
				visible, inbox int64
			}{{*owner, 1, 0}, {*director, 1, 1}, {*user("Drafter"), 0, 0}, {authn.Principal{UserID: "a", Roles: []string{"Admin"}}, 1, 1}} {
				sc, err := g.eng.Scope(ctx, "gadget", tc.p)
				if err != nil {
					t.Fatal(err)
				}
				v, vargs := sc.Visible()
				in, inargs := sc.Inbox()
				if got := countWhere(v, vargs); got != tc.visible {
					t.Errorf("%v visible %d, want %d", tc.p.Roles, got, tc.visible)
				}
				if got := countWhere(in, inargs); got != tc.inbox {
					t.Errorf("%v inbox %d, want %d", tc.p.Roles, got, tc.inbox)
				}
			}
		})

		t.Run("the SLA job advances, warns once and skips a broken document", func(t *testing.T) {
			app.Kernel.App().DB.Conn(ctx).Exec("UPDATE gadgets SET deleted_at = ?", clk.Now()) // earlier subtests' gadgets
			warnings := 0
			app.Kernel.App().Bus.Subscribe("gadget.slaWarning", events.AfterCommit, func(context.Context, events.Event) error {
				warnings++
				return nil
			})
			due := g.newGadget(t, drafter.UserID, false, false)
			urgent := g.newGadget(t, drafter.UserID, true, false)
			broken := g.newGadget(t, drafter.UserID, false, false)
			app.Kernel.App().DB.Conn(ctx).Exec("UPDATE gadgets SET phase = 'Nowhere' WHERE id = ?", broken.ID)
			run := func() { runSLA(t, app) }
			run() // due in 10 h: inside the 24 h warning window
			if warnings != 3 || g.doc(t, due.ID).Phase != "Draft" {
				t.Fatalf("%d warnings", warnings)
			}
			run()
			if warnings != 3 {
				t.Fatalf("warned twice: %d", warnings)
			}
			clk.Advance(12 * time.Hour)
			run()
			a, b := g.doc(t, due.ID), g.doc(t, urgent.ID)
			if a.Phase != "Review" || b.Phase != "Done" || g.doc(t, broken.ID).Phase != "Nowhere" {
				t.Fatalf("after expiry: %s, %s", a.Phase, b.Phase)
			}
			var comment string
			app.Kernel.App().DB.Conn(ctx).Raw("SELECT comment FROM gadget_history WHERE gadget_id = ? AND approver_user_id IS NULL AND decision = 'AutoApprove'", due.ID).Scan(&comment)
			if comment != "Automatic move: the SLA of phase Draft expired 2 hour(s) ago." {
				t.Errorf("comment %q", comment)
			}
			run() // the same expiry again: nothing moves twice
			if n := g.count(t, "SELECT COUNT(*) FROM gadget_history WHERE gadget_id = ?", due.ID); n != 1 {
				t.Errorf("%d history rows", n)
			}
		})

		t.Run("audit verify names the first tampered row", func(t *testing.T) {
			verify := func() error {
				for _, c := range app.Kernel.Commands() {
					if c.Name == "audit verify" {
						var out bytes.Buffer
						return c.Run(ctx, app.Kernel.App(), nil, &out)
					}
				}
				t.Fatal("no audit verify command")
				return nil
			}
			if err := verify(); err != nil {
				t.Fatalf("untouched history: %v", err)
			}
			doc := g.newGadget(t, drafter.UserID, false, true)
			doc2 := doc
			for _, to := range []string{"Review", "Draft", "Review", "Done"} {
				by := director
				if to == "Review" {
					by = drafter
				}
				if _, err := move(doc2, to, by, "step "+to); err != nil {
					t.Fatal(err)
				}
				doc2 = g.doc(t, doc.ID)
			}
			var second string
			app.Kernel.App().DB.Conn(ctx).Raw("SELECT id FROM gadget_history WHERE gadget_id = ? AND to_phase = 'Draft'", doc.ID).Scan(&second)
			app.Kernel.App().DB.Conn(ctx).Exec("UPDATE gadget_history SET comment = 'nothing to see' WHERE id = ?", second)
			err := verify()
			if err == nil || !strings.Contains(err.Error(), second) || !strings.Contains(err.Error(), "does not match its content") {
				t.Fatalf("tampered row %s: %v", second, err)
			}
			app.Kernel.App().DB.Conn(ctx).Exec("UPDATE gadget_history SET comment = 'step Draft' WHERE id = ?", second)
			app.Kernel.App().DB.Conn(ctx).Exec("DELETE FROM gadget_history WHERE gadget_id = ? AND to_phase = 'Done'", doc.ID)
			if err := verify(); err == nil || !strings.Contains(err.Error(), doc.ID) {
				t.Fatalf("deleted newest row: %v", err)
			}
		})
		mu.Lock()
		defer mu.Unlock()
		if len(moved) == 0 {
			t.Error("no transitioned event reached an after-commit subscriber")
		}
	})
}

// TestRuntimeBreachPolicyCalendarAndMigration: a remind step stays and
// reminds once per sla.reminderHours; working-time deadlines; documents in
// flight move to another version, or the whole migration is refused.
func TestRuntimeBreachPolicyCalendarAndMigration(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		ctx := context.Background()
		// Friday 16:00 in Asia/Ho_Chi_Minh.
		g, app, clk := startGadgets(t, d, time.Date(2026, 11, 6, 9, 0, 0, 0, time.UTC),
			testkit.WithConfig("sla.calendar", "workingHours"), testkit.WithConfig("sla.reminderHours", 6))
		drafter, admin := user("Drafter"), user("Admin")

		t.Run("working-time deadlines", func(t *testing.T) {
			doc := g.newGadget(t, drafter.UserID, false, false)
			// 10 working hours from Friday 16:00: 1 on Friday, 9 on Monday (08:00-17:00).
			if want := time.Date(2026, 11, 9, 10, 0, 0, 0, time.UTC); !doc.Deadline.Equal(want) {
				t.Fatalf("deadline %s, want %s", doc.Deadline, want)
			}
			if left := g.eng.Remaining(*doc.Deadline); left != 10*time.Hour {
				t.Errorf("remaining %s", left)
			}
			app.Kernel.App().DB.Conn(ctx).Exec("UPDATE gadgets SET deleted_at = ? WHERE id = ?", clk.Now(), doc.ID)
		})

		t.Run("remind, do not advance", func(t *testing.T) {
			var mu sync.Mutex
			var reminders []string
			app.Kernel.App().Bus.Subscribe("gadget.slaBreached", events.AfterCommit, func(_ context.Context, e events.Event) error {
				mu.Lock()
				defer mu.Unlock()
				reminders = append(reminders, fmt.Sprintf("%+v", e))
				return nil
			})
			got := func() int { mu.Lock(); defer mu.Unlock(); return len(reminders) }
			doc := g.newOf(t, "gadget.remind", drafter.UserID, false, false)
			clk.Set(doc.Deadline.Add(time.Hour))
			runSLA(t, app)
			if g.doc(t, doc.ID).Phase != "Draft" || got() != 1 {
				t.Fatalf("phase %s, %d reminders", g.doc(t, doc.ID).Phase, got())
			}
			runSLA(t, app)
			clk.Advance(5 * time.Hour)
			runSLA(t, app)
			if got() != 1 {
				t.Fatalf("%d reminders inside sla.reminderHours", got())
			}
			clk.Advance(time.Hour)
			runSLA(t, app)
			if got() != 2 {
				t.Fatalf("%d reminders after sla.reminderHours", got())
			}
			if _, err := g.eng.Move(ctx, workflowdesigner.MoveRequest{Kind: "gadget", Doc: g.doc(t, doc.ID), To: "Review", By: drafter}); err != nil {
				t.Fatal(err)
			}
			if n := g.count(t, "SELECT COUNT(*) FROM gadgets WHERE id = ? AND sla_reminded_at IS NULL", doc.ID); n != 1 {
				t.Error("a move left the reminder time")
			}
			app.Kernel.App().DB.Conn(ctx).Exec("UPDATE gadgets SET deleted_at = ? WHERE id = ?", clk.Now(), doc.ID)
		})

		def := func(docType string) *workflowdesigner.Definition {
			d, err := g.eng.ForDocumentType(ctx, docType)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		mig := g.eng.(interface {
			InFlight(ctx context.Context, id string) (workflowdesigner.InFlight, error)
			Migrate(ctx context.Context, by authn.Principal, id, toID string, dryRun bool) (workflowdesigner.InFlight, error)
		})
		from, remind, short := def("gadget"), def("gadget.remind"), def("gadget.short")

		t.Run("migration plan, refusal and re-pinning", func(t *testing.T) {
			drafting := g.newGadget(t, drafter.UserID, false, false)
			reviewing := g.newGadget(t, drafter.UserID, false, false)
			if _, err := g.eng.Move(ctx, workflowdesigner.MoveRequest{Kind: "gadget", Doc: reviewing, To: "Review", By: drafter}); err != nil {
				t.Fatal(err)
			}
			done := g.newGadget(t, drafter.UserID, true, false)
			if _, err := g.eng.Move(ctx, workflowdesigner.MoveRequest{Kind: "gadget", Doc: done, To: "Done", By: drafter}); err != nil {
				t.Fatal(err)
			}
			plan, err := mig.InFlight(ctx, from.ID)
			if err != nil || plan.Total != 2 || len(plan.ByPhase) != 2 || plan.ByPhase[0].Phase != "Draft" || plan.ByPhase[1].Phase != "Review" {
				t.Fatalf("in flight %+v, %v", plan, err)
			}
			dry, err := mig.Migrate(ctx, *admin, from.ID, short.ID, true)
			if err != nil || dry.Total != 2 || !*dry.ByPhase[0].Mapped || *dry.ByPhase[1].Mapped {
				t.Fatalf("dry run %+v, %v", dry, err)
			}
			if _, err := mig.Migrate(ctx, *admin, from.ID, short.ID, false); apperr.CodeOf(err) != "invalid_transition" || !strings.Contains(err.Error(), "Review") {
				t.Fatalf("unmapped phase: %v", err)
			}
			if n := g.count(t, "SELECT COUNT(*) FROM gadgets WHERE workflow_definition_id = ?", short.ID); n != 0 {
				t.Fatalf("a refused migration moved %d", n)
			}
			for _, bad := range []string{"nope", from.ID, uuid.Must(uuid.NewV7()).String()} {
				if _, err := mig.Migrate(ctx, *admin, from.ID, bad, false); apperr.CodeOf(err) != "validation_failed" {
					t.Errorf("target %s: %v", bad, err)
				}
			}
			before := g.doc(t, drafting.ID)
			if _, err := mig.Migrate(ctx, *admin, from.ID, remind.ID, false); err != nil {
				t.Fatal(err)
			}
			after := g.doc(t, drafting.ID)
			if after.DefinitionID != remind.ID || after.Phase != "Draft" || !after.Deadline.Equal(*before.Deadline) {
				t.Fatalf("migrated %+v", after)
			}
			if g.doc(t, done.ID).DefinitionID != from.ID {
				t.Error("a finished document was migrated")
			}
			if n := g.count(t, "SELECT COUNT(*) FROM gadget_history WHERE decision = 'Migrated' AND comment = ?",
				"Migrated from gadget-default v1 to gadget-remind v1."); n != 2 {
				t.Errorf("%d Migrated rows", n)
			}
			if _, err := g.eng.Move(ctx, workflowdesigner.MoveRequest{Kind: "gadget", Doc: before, To: "Review", By: drafter}); !errors.Is(err, workflowdesigner.ErrStaleDocument) {
				t.Errorf("a move read before the migration: %v", err)
			}
			if plan, _ := mig.InFlight(ctx, from.ID); plan.Total != 0 {
				t.Errorf("still in flight: %+v", plan)
			}
		})

		t.Run("migration under concurrent moves", func(t *testing.T) {
			for _, target := range []*workflowdesigner.Definition{short, remind} {
				source := def("gadget")
				if target == remind {
					source = remind
					target = from
				}
				var docs []workflowdesigner.Document
				for range 12 {
					doc := g.newGadget(t, drafter.UserID, false, false)
					if source.ID != doc.DefinitionID {
						app.Kernel.App().DB.Conn(ctx).Exec("UPDATE gadgets SET workflow_definition_id = ? WHERE id = ?", source.ID, doc.ID)
						doc = g.doc(t, doc.ID)
					}
					docs = append(docs, doc)
				}
				var wg sync.WaitGroup
				for _, doc := range docs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, _ = g.eng.Move(ctx, workflowdesigner.MoveRequest{Kind: "gadget", Doc: doc, To: "Review", By: drafter})
					}()
				}
				_, migErr := mig.Migrate(ctx, *admin, source.ID, target.ID, false)
				wg.Wait()
				if migErr != nil && apperr.CodeOf(migErr) != "invalid_transition" {
					t.Fatalf("migrate: %v", migErr)
				}
				for _, doc := range docs {
					now := g.doc(t, doc.ID)
					pinned, err := g.eng.Definition(ctx, now.DefinitionID)
					if err != nil || !pinned.HasPhase(now.Phase) {
						t.Fatalf("%s left in %s on %s", doc.ID, now.Phase, pinned.Key)
					}
					if migErr == nil && now.DefinitionID != target.ID {
						t.Fatalf("%s not migrated", doc.ID)
					}
				}
			}
			for _, c := range app.Kernel.Commands() {
				if c.Name == "audit verify" {
					if err := c.Run(ctx, app.Kernel.App(), nil, io.Discard); err != nil {
						t.Fatalf("history after migrations: %v", err)
					}
				}
			}
		})
	})
}
