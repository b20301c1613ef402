package workflowdesigner_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// widgets is a document kind owned by a test module, so the designer is
// tested without the contracts module.
type widgets struct {
	kind workflowdesigner.Kind
	eng  workflowdesigner.Engine
}

func (*widgets) Info() kernel.Info {
	return kernel.Info{Name: "widgets", Requires: []string{"workflowdesigner"}}
}

func (w *widgets) Provision(_ context.Context, app *kernel.App) error {
	eng, err := kernel.Need[workflowdesigner.Engine](app)
	if err != nil {
		return err
	}
	eng.RegisterKind(w.kind)
	w.eng = eng
	return nil
}

var widgetPhases = []string{"Draft", "Review", "Approved", "Rejected"}

// widgetSpec is a small valid definition: Draft → Review → Approved, with a
// guarded fast track, a return and a rejection.
func widgetSpec(key string) workflowdesigner.Spec {
	return workflowdesigner.Spec{Key: key, Name: "Widget " + key, InitialPhase: "Draft",
		Steps: []workflowdesigner.Step{
			{Phase: "Draft", SLAHours: 10, InboxRoles: []string{"Drafter"}},
			{Phase: "Review", SLAHours: 5, InboxRoles: []string{"Director", "CostControl"}},
			{Phase: "Approved", Terminal: true},
			{Phase: "Rejected", Terminal: true},
		},
		Transitions: []workflowdesigner.Transition{
			{From: "Draft", To: "Review", Kind: workflowdesigner.Forward, Roles: []string{"Drafter"}, Normal: true},
			{From: "Draft", To: "Approved", Kind: workflowdesigner.Bypass, Roles: []string{"Drafter", "Director"}, Normal: true, Guard: "urgent"},
			{From: "Review", To: "Approved", Kind: workflowdesigner.Forward, Roles: []string{"Director"}, Normal: true},
			{From: "Review", To: "Draft", Kind: workflowdesigner.Return, Roles: []string{"Director"}},
			{From: "Review", To: "Rejected", Kind: workflowdesigner.Reject, Roles: []string{"Director"}},
		}}
}

func widgetKind() workflowdesigner.Kind {
	return workflowdesigner.Kind{Name: "widget", Phases: widgetPhases, DocumentTypes: []string{"widget.a", "widget.b", "widget.c"},
		Facts: []string{"urgent"},
		Defaults: []workflowdesigner.Default{
			{Spec: widgetSpec("widget-one"), AssignTo: []string{"widget.a", "widget.b"}},
			{Spec: widgetSpec("widget-two"), AssignTo: []string{"widget.b", "widget.c"}}, // widget.b keeps the first
		}}
}

func modules(w *widgets) testkit.Option {
	return testkit.WithModules(
		func() kernel.Module { return identity.New() },
		func() kernel.Module { return workflowdesigner.New() },
		func() kernel.Module { return w },
	)
}

func count(t *testing.T, app *testkit.App, table string) int64 {
	t.Helper()
	var n int64
	if err := app.Kernel.App().DB.Conn(context.Background()).Raw("SELECT COUNT(*) FROM " + table).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSeed: a registered kind's defaults are stored as published version 1
// and assigned to document types that have no assignment; the stored
// definition reads back as it was declared; seeding again changes nothing.
func TestSeed(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		w := &widgets{kind: widgetKind()}
		app := identitytest.Start(t, d, modules(w))
		ctx := context.Background()
		a, err := w.eng.ForDocumentType(ctx, "widget.a")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := w.eng.ForDocumentType(ctx, "widget.b")
		c, _ := w.eng.ForDocumentType(ctx, "widget.c")
		if a.Key != "widget-one" || b.ID != a.ID || c.Key != "widget-two" || c.ID == a.ID {
			t.Fatalf("assignments a=%s b=%s c=%s", a.Key, b.Key, c.Key)
		}
		if a.Version != 1 || !a.Published || a.DocumentKind != "widget" || a.InitialPhase != "Draft" || a.Name != "Widget widget-one" {
			t.Fatalf("definition %+v", a)
		}
		want := widgetSpec("widget-one")
		for i := range want.Steps {
			slices.Sort(want.Steps[i].InboxRoles)
		}
		for i := range want.Transitions {
			slices.Sort(want.Transitions[i].Roles)
		}
		if !slices.EqualFunc(a.Steps, want.Steps, func(x, y workflowdesigner.Step) bool {
			return x.Phase == y.Phase && x.SLAHours == y.SLAHours && x.Terminal == y.Terminal && slices.Equal(x.InboxRoles, y.InboxRoles)
		}) {
			t.Errorf("steps %+v, want %+v", a.Steps, want.Steps)
		}
		if !slices.EqualFunc(a.Transitions, want.Transitions, func(x, y workflowdesigner.Transition) bool {
			return x.From == y.From && x.To == y.To && x.Kind == y.Kind && x.Guard == y.Guard && x.Normal == y.Normal && slices.Equal(x.Roles, y.Roles)
		}) {
			t.Errorf("transitions %+v, want %+v", a.Transitions, want.Transitions)
		}
		if tr, ok := a.NormalMove("Draft", workflowdesigner.Facts{"urgent": true}); !ok || tr.To != "Approved" {
			t.Errorf("guard lost in storage: %+v", tr)
		}
		published, err := w.eng.Published(ctx, "widget")
		if err != nil || len(published) != 2 {
			t.Fatalf("published %d, %v", len(published), err)
		}
		if other, err := w.eng.Published(ctx, "contract"); err != nil || len(other) != 0 {
			t.Fatalf("published of another kind: %d, %v", len(other), err)
		}

		tables := []string{"workflow_definitions", "workflow_steps", "workflow_step_approvers", "workflow_transitions",
			"workflow_transition_roles", "workflow_type_assignments"}
		before := map[string]int64{}
		for _, tb := range tables {
			before[tb] = count(t, app, tb)
		}
		if before["workflow_definitions"] != 2 || before["workflow_steps"] != 8 || before["workflow_transitions"] != 10 || before["workflow_type_assignments"] != 3 {
			t.Fatalf("rows %v", before)
		}
		if err := app.Kernel.Seed(ctx); err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			if n := count(t, app, tb); n != before[tb] {
				t.Errorf("%s: %d rows after reseeding, %d before", tb, n, before[tb])
			}
		}
		if again, _ := w.eng.ForDocumentType(ctx, "widget.a"); again.ID != a.ID {
			t.Error("reseeding replaced the definition")
		}

		t.Run("unknown ids", func(t *testing.T) {
			if _, err := w.eng.Definition(ctx, "0190f5f2-7a3b-7c4d-8e5f-000000000001"); apperr.KindOf(err) != apperr.KindNotFound {
				t.Errorf("unknown definition: %v", err)
			}
			if _, err := w.eng.ForDocumentType(ctx, "widget.zzz"); err == nil {
				t.Error("an unassigned document type has a definition")
			}
		})
	})
}

// TestSeedRefusesInvalidDefault: a default that breaks a rule of DESIGN §4
// stops the start, naming the problem, and writes nothing.
func TestSeedRefusesInvalidDefault(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		bad := widgetSpec("widget-bad")
		bad.Steps[1].SLAHours = 0
		w := &widgets{kind: workflowdesigner.Kind{Name: "widget", Phases: widgetPhases,
			Defaults: []workflowdesigner.Default{{Spec: bad, AssignTo: []string{"widget.a"}}}}}
		set := testkit.Isolated(t, d)
		set["seed.demo"] = false
		set["identity.password.hash.memoryKiB"] = 64
		set["identity.password.hash.iterations"] = 1
		k, err := kernel.New(kernel.Options{Set: set, Environ: []string{}, LogOutput: io.Discard, Modules: []kernel.Factory{
			func() kernel.Module { return identity.New() },
			func() kernel.Module { return workflowdesigner.New() },
			func() kernel.Module { return w },
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k.Close(context.Background()) })
		err = k.Start(context.Background())
		if err == nil || !strings.Contains(err.Error(), "widget-bad is invalid") || !strings.Contains(err.Error(), "SLA hours must be above zero") {
			t.Fatalf("start: %v", err)
		}
		var n int64
		if err := k.App().DB.Conn(context.Background()).Raw("SELECT COUNT(*) FROM workflow_definitions").Scan(&n).Error; err != nil || n != 0 {
			t.Fatalf("%d definitions written, %v", n, err)
		}
	})
}
