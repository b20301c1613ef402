package workflowdesigner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/testkit"
)

// designerKinds registers two made-up document kinds: widgets (seed_test.go's,
// with the fact "urgent" and the precondition "ready") and gizmos, so the
// designer is tested without the contracts module, across kinds.
type designerKinds struct{ eng workflowdesigner.Engine }

func (*designerKinds) Info() kernel.Info {
	return kernel.Info{Name: "designerkinds", Requires: []string{"workflowdesigner"}}
}

func (k *designerKinds) Provision(_ context.Context, app *kernel.App) error {
	eng, err := kernel.Need[workflowdesigner.Engine](app)
	if err != nil {
		return err
	}
	widget := widgetKind()
	widget.Preconditions = []workflowdesigner.Precondition{{Name: "ready", Code: "widget_not_ready",
		Check: func(context.Context, workflowdesigner.Document) (string, error) { return "", nil }}}
	eng.RegisterKind(widget)
	eng.RegisterKind(workflowdesigner.Kind{Name: "gizmo", Phases: []string{"Open", "Closed"}, DocumentTypes: []string{"gizmo.x"},
		Defaults: []workflowdesigner.Default{{AssignTo: []string{"gizmo.x"}, Spec: workflowdesigner.Spec{
			Key: "gizmo-default", Name: "Gizmos", InitialPhase: "Open",
			Steps: []workflowdesigner.Step{{Phase: "Open", SLAHours: 8, InboxRoles: []string{"Finance"}}, {Phase: "Closed", Terminal: true}},
			Transitions: []workflowdesigner.Transition{
				{From: "Open", To: "Closed", Kind: workflowdesigner.Forward, Roles: []string{"Finance"}, Normal: true}},
		}}}})
	k.eng = eng
	return nil
}

// The definition JSON of DESIGN §4.1, as a client reads and writes it.
type (
	wfStep struct {
		Phase       string   `json:"phase"`
		SLAHours    int      `json:"slaHours"`
		Terminal    bool     `json:"terminal"`
		InboxRoles  []string `json:"inboxRoles"`
		OnSLABreach string   `json:"onSlaBreach"`
	}
	wfMove struct {
		From         string   `json:"from"`
		To           string   `json:"to"`
		Kind         string   `json:"kind"`
		Roles        []string `json:"roles"`
		Guard        string   `json:"guard"`
		Normal       bool     `json:"normal"`
		Precondition string   `json:"precondition"`
	}
	wfDraft struct {
		Name         string   `json:"name"`
		InitialPhase string   `json:"initialPhase"`
		Steps        []wfStep `json:"steps"`
		Transitions  []wfMove `json:"transitions"`
	}
	wfDef struct {
		wfDraft
		ID           string     `json:"id"`
		Key          string     `json:"key"`
		Version      int        `json:"version"`
		DocumentKind string     `json:"documentKind"`
		Status       string     `json:"status"`
		PublishedAt  *time.Time `json:"publishedAt"`
		CreatedAt    time.Time  `json:"createdAt"`
		CreatedBy    *string    `json:"createdBy"`
		UpdatedAt    time.Time  `json:"updatedAt"`
		UpdatedBy    *string    `json:"updatedBy"`
	}
	wfProblem struct {
		Code, Message, Phase, From, To string
	}
	wfValidation struct {
		Valid    bool        `json:"valid"`
		Problems []wfProblem `json:"problems"`
	}
	wfAssignment struct {
		DocumentType         string  `json:"documentType"`
		WorkflowDefinitionID *string `json:"workflowDefinitionId"`
		Key                  *string `json:"key"`
		Version              *int    `json:"version"`
	}
)

// validDraft is a widget workflow that breaks no rule: a guarded fast
// track, a precondition, a return, a rejection and a remind policy.
func validDraft() wfDraft {
	return wfDraft{Name: "Widgets, reviewed", InitialPhase: "Draft",
		Steps: []wfStep{
			{Phase: "Draft", SLAHours: 10, InboxRoles: []string{"Drafter"}, OnSLABreach: "advance"},
			{Phase: "Review", SLAHours: 5, InboxRoles: []string{"CostControl", "Director"}, OnSLABreach: "remind"},
			{Phase: "Approved", Terminal: true, InboxRoles: []string{}, OnSLABreach: "advance"},
			{Phase: "Rejected", Terminal: true, InboxRoles: []string{}, OnSLABreach: "advance"},
		},
		Transitions: []wfMove{
			{From: "Draft", To: "Review", Kind: "forward", Roles: []string{"Drafter"}, Normal: true},
			{From: "Draft", To: "Approved", Kind: "bypass", Roles: []string{"Director", "Drafter"}, Normal: true, Guard: "urgent"},
			{From: "Review", To: "Approved", Kind: "forward", Roles: []string{"Director"}, Normal: true, Precondition: "ready"},
			{From: "Review", To: "Draft", Kind: "return", Roles: []string{"Director"}},
			{From: "Review", To: "Rejected", Kind: "reject", Roles: []string{"Director"}},
		}}
}

func (d wfDraft) clone() wfDraft {
	c := d
	c.Steps = slices.Clone(d.Steps)
	for i := range c.Steps {
		c.Steps[i].InboxRoles = slices.Clone(d.Steps[i].InboxRoles)
	}
	c.Transitions = slices.Clone(d.Transitions)
	for i := range c.Transitions {
		c.Transitions[i].Roles = slices.Clone(d.Transitions[i].Roles)
	}
	return c
}

func (d *wfDraft) step(t *testing.T, phase string) *wfStep {
	for i := range d.Steps {
		if d.Steps[i].Phase == phase {
			return &d.Steps[i]
		}
	}
	t.Fatalf("no step %s", phase)
	return nil
}

func (d *wfDraft) move(t *testing.T, from, to string) *wfMove {
	for i := range d.Transitions {
		if d.Transitions[i].From == from && d.Transitions[i].To == to {
			return &d.Transitions[i]
		}
	}
	t.Fatalf("no move %s → %s", from, to)
	return nil
}

func (d *wfDraft) drop(t *testing.T, from, to string) {
	for i, m := range d.Transitions {
		if m.From == from && m.To == to {
			d.Transitions = slices.Delete(d.Transitions, i, i+1)
			return
		}
	}
	t.Fatalf("no move %s → %s", from, to)
}

// designerEnv is one instance with the two kinds and an administrator.
type designerEnv struct {
	app     *testkit.App
	kinds   *designerKinds
	admin   string // an Admin's token
	adminID string
}

func startDesigner(t *testing.T, driver string) *designerEnv {
	t.Helper()
	k := &designerKinds{}
	app := identitytest.Start(t, driver, testkit.WithModules(
		func() kernel.Module { return identity.New() },
		func() kernel.Module { return workflowdesigner.New() },
		func() kernel.Module { return k },
	), testkit.WithConfig("rateLimit.enabled", false))
	id, _, token := identitytest.NewUser(t, app, identity.RoleAdmin)
	return &designerEnv{app: app, kinds: k, admin: token, adminID: id}
}

func (e *designerEnv) do(method, path, token string, body any) *testkit.Response {
	return e.app.Do(testkit.Request{Method: method, Path: path, Token: token, Body: body})
}

// must sends a request as the administrator and fails unless it answers status.
func (e *designerEnv) must(t *testing.T, status int, method, path string, body any) *testkit.Response {
	t.Helper()
	r := e.do(method, path, e.admin, body)
	if r.Status != status {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, status, r.Body)
	}
	return r
}

func (e *designerEnv) def(t *testing.T, r *testkit.Response) wfDef {
	t.Helper()
	var d wfDef
	r.JSON(t, &d)
	return d
}

func (e *designerEnv) get(t *testing.T, id string) wfDef {
	t.Helper()
	return e.def(t, e.must(t, 200, "GET", "/api/workflows/"+id, nil))
}

// draft creates a draft of key in kind and, when content is given, stores it.
func (e *designerEnv) draft(t *testing.T, kind, key string, content *wfDraft) wfDef {
	t.Helper()
	d := e.def(t, e.must(t, 201, "POST", "/api/workflows", map[string]any{"documentKind": kind, "key": key, "name": "Draft " + key}))
	if content != nil {
		d = e.def(t, e.must(t, 200, "PUT", "/api/workflows/"+d.ID, content))
	}
	return d
}

// published returns a published widget definition of key made from content.
func (e *designerEnv) published(t *testing.T, key string, content wfDraft) wfDef {
	t.Helper()
	d := e.draft(t, "widget", key, &content)
	return e.def(t, e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/publish", nil))
}

func (e *designerEnv) list(t *testing.T, query string) []wfDef {
	t.Helper()
	var out []wfDef
	e.must(t, 200, "GET", "/api/workflows"+query, nil).JSON(t, &out)
	return out
}

func (e *designerEnv) seeded(t *testing.T, key string) wfDef {
	t.Helper()
	for _, d := range e.list(t, "") {
		if d.Key == key && d.Version == 1 {
			return d
		}
	}
	t.Fatalf("no seeded %s", key)
	return wfDef{}
}

func (e *designerEnv) count(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := e.app.Kernel.App().DB.Conn(context.Background()).Raw(query, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// sameContent compares what PUT replaces, as the API answers it: absent
// lists are [] and an absent breach policy is advance.
func sameContent(t *testing.T, got wfDef, want wfDraft) {
	t.Helper()
	want = want.clone()
	if want.Steps == nil {
		want.Steps = []wfStep{}
	}
	if want.Transitions == nil {
		want.Transitions = []wfMove{}
	}
	for i, s := range want.Steps {
		if s.InboxRoles == nil {
			want.Steps[i].InboxRoles = []string{}
		}
		if s.OnSLABreach == "" {
			want.Steps[i].OnSLABreach = "advance"
		}
	}
	for i, m := range want.Transitions {
		if m.Roles == nil {
			want.Transitions[i].Roles = []string{}
		}
	}
	g, _ := json.Marshal(got.wfDraft)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("content\n got %s\nwant %s", g, w)
	}
}

// TestDesignerLifecycle walks every endpoint's happy path: list, get,
// create (empty and as a copy), replace, validate, publish, delete, with
// the audit fields of the callers and the immutability of what is
// published.
func TestDesignerLifecycle(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		all := e.list(t, "")
		var keys []string
		for _, d := range all {
			keys = append(keys, fmt.Sprintf("%s v%d %s %s", d.Key, d.Version, d.DocumentKind, d.Status))
			if d.Steps == nil || d.Transitions == nil || d.PublishedAt == nil || d.CreatedBy != nil {
				t.Errorf("seeded %s: %+v", d.Key, d)
			}
		}
		if want := []string{"gizmo-default v1 gizmo Published", "widget-one v1 widget Published", "widget-two v1 widget Published"}; !slices.Equal(keys, want) {
			t.Fatalf("list %v, want %v", keys, want)
		}
		if gizmos := e.list(t, "?documentKind=gizmo"); len(gizmos) != 1 || gizmos[0].Key != "gizmo-default" {
			t.Fatalf("gizmos %+v", gizmos)
		}
		testkit.WantProblem(t, e.do("GET", "/api/workflows?documentKind=contrakt", e.admin, nil), 400, "validation_failed", "DocumentKind")

		one := e.seeded(t, "widget-one")
		if got := e.get(t, one.ID); got.InitialPhase != "Draft" || len(got.Steps) != 4 || len(got.Transitions) != 5 ||
			got.Steps[0].OnSLABreach != "advance" || got.Transitions[1].Guard != "urgent" || !got.Transitions[1].Normal {
			t.Fatalf("seeded widget-one %+v", got)
		}

		// A new draft is empty, version one above the key's highest.
		r := e.must(t, 201, "POST", "/api/workflows", map[string]any{"documentKind": "widget", "key": "widget-one", "name": "Widgets, second try"})
		d := e.def(t, r)
		if loc := r.Header.Get("Location"); loc != "/api/workflows/"+d.ID {
			t.Errorf("Location %q", loc)
		}
		if d.Version != 2 || d.Status != "Draft" || d.DocumentKind != "widget" || d.Name != "Widgets, second try" || d.InitialPhase != "" ||
			d.Steps == nil || len(d.Steps) != 0 || d.Transitions == nil || d.PublishedAt != nil ||
			d.CreatedBy == nil || *d.CreatedBy != e.adminID || d.UpdatedBy == nil || *d.UpdatedBy != e.adminID {
			t.Fatalf("new draft %+v", d)
		}
		if got := e.get(t, d.ID); !got.CreatedAt.Equal(d.CreatedAt) || got.Version != 2 {
			t.Fatalf("read back %+v, created %+v", got, d)
		}

		// A copy carries the source's content.
		cp := e.def(t, e.must(t, 201, "POST", "/api/workflows", map[string]any{"documentKind": "widget", "key": "widget-one", "name": "Copy", "fromId": one.ID}))
		if cp.Version != 3 || cp.Status != "Draft" || cp.Name != "Copy" {
			t.Fatalf("copy %+v", cp)
		}
		src := e.get(t, one.ID)
		src.Name = "Copy"
		sameContent(t, cp, src.wfDraft)
		// Copying under a new key starts it at version 1.
		if other := e.def(t, e.must(t, 201, "POST", "/api/workflows", map[string]any{"documentKind": "widget", "key": "widget-three", "name": "Three", "fromId": cp.ID})); other.Version != 1 || len(other.Steps) != 4 {
			t.Fatalf("copy under a new key %+v", other)
		}

		// Another administrator replaces the draft: updatedBy changes, createdBy does not.
		otherID, _, other := identitytest.NewUser(t, e.app, identity.RoleAdmin)
		content := validDraft()
		r = e.do("PUT", "/api/workflows/"+d.ID, other, content)
		if r.Status != 200 {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		put := e.def(t, r)
		sameContent(t, put, content)
		if put.Status != "Draft" || *put.CreatedBy != e.adminID || *put.UpdatedBy != otherID || put.Version != 2 || put.Key != "widget-one" {
			t.Fatalf("after PUT %+v", put)
		}
		got := e.get(t, d.ID)
		sameContent(t, got, content)
		if !got.UpdatedAt.Equal(put.UpdatedAt) {
			t.Errorf("updatedAt %v, PUT said %v", got.UpdatedAt, put.UpdatedAt)
		}

		// Valid: validate says so with an empty list, publish makes it immutable.
		r = e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/validate", nil)
		if !strings.Contains(string(r.Body), `"problems":[]`) || !strings.Contains(string(r.Body), `"valid":true`) {
			t.Fatalf("validate %s", r.Body)
		}
		pub := e.def(t, e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/publish", nil))
		if pub.Status != "Published" || pub.PublishedAt == nil || *pub.UpdatedBy != e.adminID || pub.Version != 2 {
			t.Fatalf("published %+v", pub)
		}
		sameContent(t, pub, content)
		got = e.get(t, d.ID)
		if got.Status != "Published" || got.PublishedAt == nil || !got.PublishedAt.Equal(*pub.PublishedAt) {
			t.Fatalf("read back %+v", got)
		}
		sameContent(t, got, content)
		// The runtime sees the same definition.
		def, err := e.kinds.eng.Definition(context.Background(), d.ID)
		if err != nil || !def.Published || def.Version != 2 || len(def.Steps) != 4 || def.Steps[1].Breach() != workflowdesigner.BreachRemind ||
			def.Transitions[2].Precondition != "ready" {
			t.Fatalf("engine's definition %+v, %v", def, err)
		}

		// Published is for good.
		testkit.WantProblem(t, e.do("PUT", "/api/workflows/"+d.ID, e.admin, validDraft()), 409, "not_editable")
		testkit.WantProblem(t, e.do("POST", "/api/workflows/"+d.ID+"/publish", e.admin, nil), 409, "not_editable")
		testkit.WantProblem(t, e.do("DELETE", "/api/workflows/"+d.ID, e.admin, nil), 409, "not_deletable")
		testkit.WantProblem(t, e.do("DELETE", "/api/workflows/"+one.ID, e.admin, nil), 409, "not_deletable")
		sameContent(t, e.get(t, d.ID), content)
		if v := e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/validate", nil); !strings.Contains(string(v.Body), `"valid":true`) {
			t.Errorf("validate a published definition: %s", v.Body)
		}

		// A draft is deleted; its key's next version is still one above the highest.
		e.must(t, 204, "DELETE", "/api/workflows/"+cp.ID, nil)
		testkit.WantProblem(t, e.do("GET", "/api/workflows/"+cp.ID, e.admin, nil), 404, "not_found")
		if next := e.draft(t, "widget", "widget-one", nil); next.Version != 3 {
			t.Errorf("after deleting v3, the next draft is v%d", next.Version)
		}

		t.Run("unknown id", func(t *testing.T) {
			for _, id := range []string{"0190f5f2-7a3b-7c4d-8e5f-000000000001", "not-a-uuid"} {
				for _, c := range []struct {
					method, path string
					body         any
				}{
					{"GET", "/api/workflows/" + id, nil},
					{"PUT", "/api/workflows/" + id, validDraft()},
					{"DELETE", "/api/workflows/" + id, nil},
					{"POST", "/api/workflows/" + id + "/validate", nil},
					{"POST", "/api/workflows/" + id + "/publish", nil},
				} {
					testkit.WantProblem(t, e.do(c.method, c.path, e.admin, c.body), 404, "not_found")
				}
			}
		})
	})
}

// TestDesignerAccess: every endpoint needs a token (401) and a Workflows
// policy (403 for a Drafter, whom DESIGN §2 grants none); a role granted
// Workflows.Read reads and validates but writes nothing. Refused calls
// change nothing.
func TestDesignerAccess(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		one := e.seeded(t, "widget-one")
		d := e.draft(t, "widget", "widget-one", nil)
		type call struct {
			method, path string
			body         any
			read         bool // Workflows.Read is enough
		}
		calls := []call{
			{"GET", "/api/workflows", nil, true},
			{"POST", "/api/workflows", map[string]any{"documentKind": "widget", "key": "widget-one", "name": "x"}, false},
			{"GET", "/api/workflows/" + d.ID, nil, true},
			{"PUT", "/api/workflows/" + d.ID, validDraft(), false},
			{"DELETE", "/api/workflows/" + d.ID, nil, false},
			{"POST", "/api/workflows/" + d.ID + "/validate", nil, true},
			{"POST", "/api/workflows/" + d.ID + "/publish", nil, false},
			{"GET", "/api/workflows/assignments", nil, true},
			{"PUT", "/api/workflows/assignments", map[string]any{"documentType": "widget.c", "workflowDefinitionId": one.ID}, false},
		}
		drafter := identitytest.Token(t, e.app, identity.RoleDrafter)
		reader := identitytest.Token(t, e.app, identity.RoleDirector)
		e.must(t, 200, "PUT", "/api/permissions", map[string]any{"role": identity.RoleDirector, "menuKey": "Workflows",
			"canRead": true, "canCreate": false, "canUpdate": false, "canDelete": false})
		before := e.count(t, "SELECT COUNT(*) FROM workflow_definitions")
		for _, c := range calls {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				if r := e.do(c.method, c.path, "", c.body); r.Status != 401 {
					t.Errorf("without a token: %d %s", r.Status, r.Body)
				}
				testkit.WantProblem(t, e.do(c.method, c.path, drafter, c.body), 403, "forbidden")
				r := e.do(c.method, c.path, reader, c.body)
				switch {
				case c.read && r.Status != 200:
					t.Errorf("Workflows.Read: %d %s", r.Status, r.Body)
				case !c.read:
					testkit.WantProblem(t, r, 403, "forbidden")
				}
			})
		}
		if n := e.count(t, "SELECT COUNT(*) FROM workflow_definitions"); n != before {
			t.Errorf("%d definitions, %d before the refused calls", n, before)
		}
		if got := e.get(t, d.ID); got.Status != "Draft" || len(got.Steps) != 0 {
			t.Errorf("the draft changed: %+v", got)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM workflow_type_assignments WHERE document_type = 'widget.c' AND definition_id = ?", one.ID); n != 0 {
			t.Error("a refused assignment was written")
		}
	})
}

// TestDesignerValidationRules breaks one rule at a time in a stored draft:
// PUT keeps it as sent, validate reports the rule's code at the step or
// move it concerns, and publish refuses with 400 and the same problem.
func TestDesignerValidationRules(t *testing.T) {
	type rule struct {
		name   string
		change func(t *testing.T, d *wfDraft)
		want   wfProblem // Code and the subject; Message is a fragment
		field  string    // where publish's errors put it
	}
	rules := []rule{
		{"no name", func(_ *testing.T, d *wfDraft) { d.Name = "" }, wfProblem{Code: "no_name", Message: "needs a name"}, "Name"},
		{"phase outside the kind", func(_ *testing.T, d *wfDraft) {
			d.Steps = append(d.Steps, wfStep{Phase: "Limbo", SLAHours: 1, OnSLABreach: "advance"})
			d.Transitions = append(d.Transitions, wfMove{From: "Review", To: "Limbo", Kind: "forward", Roles: []string{"Director"}},
				wfMove{From: "Limbo", To: "Approved", Kind: "forward", Roles: []string{"Director"}, Normal: true})
		}, wfProblem{Code: "unknown_phase", Phase: "Limbo", Message: "not a phase of this document kind"}, "Steps"},
		{"step listed twice", func(_ *testing.T, d *wfDraft) {
			d.Steps = append(d.Steps, wfStep{Phase: "Review", SLAHours: 3, OnSLABreach: "advance"})
		}, wfProblem{Code: "duplicate_step", Phase: "Review", Message: "listed twice"}, "Steps"},
		{"terminal initial phase", func(_ *testing.T, d *wfDraft) { d.InitialPhase = "Approved" },
			wfProblem{Code: "bad_initial_phase", Phase: "Approved", Message: "must be a non-terminal step"}, "InitialPhase"},
		{"no initial phase", func(_ *testing.T, d *wfDraft) { d.InitialPhase = "" },
			wfProblem{Code: "bad_initial_phase", Message: "must be a non-terminal step"}, "InitialPhase"},
		{"zero SLA", func(t *testing.T, d *wfDraft) { d.step(t, "Review").SLAHours = 0 },
			wfProblem{Code: "bad_sla", Phase: "Review", Message: "SLA hours must be above zero"}, "Steps"},
		{"negative SLA", func(t *testing.T, d *wfDraft) { d.step(t, "Draft").SLAHours = -3 },
			wfProblem{Code: "bad_sla", Phase: "Draft", Message: "SLA hours must be above zero"}, "Steps"},
		{"absurd SLA", func(t *testing.T, d *wfDraft) { d.step(t, "Draft").SLAHours = 100000 },
			wfProblem{Code: "bad_sla", Phase: "Draft", Message: "at most 8760"}, "Steps"},
		{"unknown breach policy", func(t *testing.T, d *wfDraft) { d.step(t, "Review").OnSLABreach = "escalate" },
			wfProblem{Code: "bad_breach_policy", Phase: "Review", Message: "advance or remind"}, "Steps"},
		{"inbox role that does not exist", func(t *testing.T, d *wfDraft) { d.step(t, "Review").InboxRoles = []string{"Director", "Janitor"} },
			wfProblem{Code: "unknown_role", Phase: "Review", Message: `"Janitor" does not exist`}, "Steps"},
		{"move role that does not exist", func(t *testing.T, d *wfDraft) { d.move(t, "Review", "Draft").Roles = []string{"director"} },
			wfProblem{Code: "unknown_role", From: "Review", To: "Draft", Message: `"director" does not exist`}, "Transitions"},
		{"move to an unknown step", func(_ *testing.T, d *wfDraft) {
			d.Transitions = append(d.Transitions, wfMove{From: "Review", To: "Nowhere", Kind: "reject", Roles: []string{"Director"}})
		}, wfProblem{Code: "unknown_step", From: "Review", To: "Nowhere", Message: "both ends must be steps"}, "Transitions"},
		{"move out of a terminal step", func(_ *testing.T, d *wfDraft) {
			d.Transitions = append(d.Transitions, wfMove{From: "Rejected", To: "Draft", Kind: "return", Roles: []string{"Drafter"}})
		}, wfProblem{Code: "terminal_has_moves", From: "Rejected", To: "Draft", Message: "a terminal step has no moves"}, "Transitions"},
		{"duplicate move", func(_ *testing.T, d *wfDraft) {
			d.Transitions = append(d.Transitions, wfMove{From: "Review", To: "Draft", Kind: "return", Roles: []string{"CostControl"}})
		}, wfProblem{Code: "duplicate_move", From: "Review", To: "Draft", Message: "the same move as move 4"}, "Transitions"},
		{"move with no role", func(t *testing.T, d *wfDraft) { d.move(t, "Review", "Rejected").Roles = []string{} },
			wfProblem{Code: "no_roles", From: "Review", To: "Rejected", Message: "needs at least one role"}, "Transitions"},
		{"unknown move kind", func(t *testing.T, d *wfDraft) { d.move(t, "Review", "Rejected").Kind = "sideways" },
			wfProblem{Code: "bad_kind", From: "Review", To: "Rejected", Message: "forward, return, reject or bypass"}, "Transitions"},
		{"malformed guard", func(t *testing.T, d *wfDraft) { d.move(t, "Draft", "Approved").Guard = "urgent == true" },
			wfProblem{Code: "bad_guard", From: "Draft", To: "Approved", Message: "guard must be a fact name"}, "Transitions"},
		{"guard on an undeclared fact", func(t *testing.T, d *wfDraft) { d.move(t, "Draft", "Approved").Guard = "!vip" },
			wfProblem{Code: "unknown_fact", From: "Draft", To: "Approved", Message: `"vip", which is not a fact of this document kind (it declares urgent)`}, "Transitions"},
		{"undeclared precondition", func(t *testing.T, d *wfDraft) { d.move(t, "Review", "Approved").Precondition = "signed" },
			wfProblem{Code: "unknown_precondition", From: "Review", To: "Approved", Message: `"signed" is not one this document kind declares (it declares ready)`}, "Transitions"},
		{"no normal move", func(t *testing.T, d *wfDraft) { d.move(t, "Review", "Approved").Normal = false },
			wfProblem{Code: "normal_moves", Phase: "Review", Message: "has 0"}, "Transitions"},
		{"two normal moves", func(t *testing.T, d *wfDraft) { d.move(t, "Review", "Rejected").Normal = true },
			wfProblem{Code: "normal_moves", Phase: "Review", Message: "has 2"}, "Transitions"},
		{"unreachable step", func(t *testing.T, d *wfDraft) { d.drop(t, "Review", "Rejected") },
			wfProblem{Code: "unreachable", Phase: "Rejected", Message: "not reachable from the initial phase"}, "Transitions"},
		{"no terminal reachable", func(t *testing.T, d *wfDraft) {
			d.drop(t, "Draft", "Approved")
			d.drop(t, "Review", "Approved")
			d.drop(t, "Review", "Rejected")
			d.Transitions = append(d.Transitions, wfMove{From: "Review", To: "Review", Kind: "forward", Roles: []string{"Director"}, Normal: true})
		}, wfProblem{Code: "no_terminal", Phase: "Review", Message: "no terminal step can be reached"}, "Transitions"},
	}
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		for i, rc := range rules {
			t.Run(rc.name, func(t *testing.T) {
				t.Parallel()
				content := validDraft()
				rc.change(t, &content)
				d := e.draft(t, "widget", fmt.Sprintf("rule-%d", i), &content)
				// Stored as sent, whatever it breaks.
				sameContent(t, e.get(t, d.ID), content)

				var v wfValidation
				e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/validate", nil).JSON(t, &v)
				if v.Valid || !hasProblem(v.Problems, rc.want) {
					t.Fatalf("validate: valid %v, problems %+v lack %+v", v.Valid, v.Problems, rc.want)
				}

				r := e.do("POST", "/api/workflows/"+d.ID+"/publish", e.admin, nil)
				p := testkit.WantProblem(t, r, 400, "validation_failed", rc.field)
				if !slices.ContainsFunc(p.Errors[rc.field], func(m string) bool { return strings.Contains(m, rc.want.Message) }) {
					t.Errorf("errors.%s %q lack %q", rc.field, p.Errors[rc.field], rc.want.Message)
				}
				var body struct{ Problems []wfProblem }
				r.JSON(t, &body)
				if !hasProblem(body.Problems, rc.want) || len(body.Problems) != len(v.Problems) {
					t.Errorf("publish's problems %+v, validate's %+v", body.Problems, v.Problems)
				}
				if got := e.get(t, d.ID); got.Status != "Draft" || got.PublishedAt != nil {
					t.Fatalf("refused publication left %+v", got)
				}
				if n := e.count(t, "SELECT COUNT(*) FROM workflow_steps WHERE definition_id = ?", d.ID); n != 0 {
					t.Errorf("refused publication wrote %d steps", n)
				}
			})
		}
	})
}

func hasProblem(ps []wfProblem, want wfProblem) bool {
	return slices.ContainsFunc(ps, func(p wfProblem) bool {
		return p.Code == want.Code && p.Phase == want.Phase && p.From == want.From && p.To == want.To && strings.Contains(p.Message, want.Message)
	})
}

// TestDesignerBadInput: malformed JSON, wrong types and refused fields are
// 400 naming the field, and write nothing; a well-typed draft that breaks
// every rule is stored.
func TestDesignerBadInput(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		one := e.seeded(t, "widget-one")
		gizmo := e.seeded(t, "gizmo-default")
		content := validDraft()
		d := e.draft(t, "widget", "bad-input", &content)
		stored := e.get(t, d.ID)
		definitions := e.count(t, "SELECT COUNT(*) FROM workflow_definitions")

		t.Run("create", func(t *testing.T) {
			for _, c := range []struct {
				name   string
				body   any
				fields []string
			}{
				{"malformed JSON", `{"documentKind": "widget", "key": `, []string{"Body"}},
				{"not an object", `[1, 2]`, []string{"Body"}},
				{"empty body", ``, []string{"Body"}},
				{"name of the wrong type", `{"documentKind": "widget", "key": "k", "name": 7}`, []string{"Name"}},
				{"fromId of the wrong type", `{"documentKind": "widget", "key": "k", "name": "n", "fromId": true}`, []string{"FromId"}},
				{"nothing", `{}`, []string{"DocumentKind", "Key", "Name"}},
				{"unknown kind", map[string]any{"documentKind": "contrakt", "key": "k", "name": "n"}, []string{"DocumentKind"}},
				{"key with a space", map[string]any{"documentKind": "widget", "key": "my key", "name": "n"}, []string{"Key"}},
				{"key too long", map[string]any{"documentKind": "widget", "key": strings.Repeat("k", 65), "name": "n"}, []string{"Key"}},
				{"blank name", map[string]any{"documentKind": "widget", "key": "k", "name": "  "}, []string{"Name"}},
				{"name too long", map[string]any{"documentKind": "widget", "key": "k", "name": strings.Repeat("n", 201)}, []string{"Name"}},
				{"control character in the name", map[string]any{"documentKind": "widget", "key": "k", "name": "a\x00b"}, []string{"Name"}},
				{"unknown fromId", map[string]any{"documentKind": "widget", "key": "k", "name": "n", "fromId": "0190f5f2-7a3b-7c4d-8e5f-000000000001"}, []string{"FromId"}},
				{"fromId of another kind", map[string]any{"documentKind": "widget", "key": "k", "name": "n", "fromId": gizmo.ID}, []string{"FromId"}},
				{"key of another kind", map[string]any{"documentKind": "widget", "key": "gizmo-default", "name": "n"}, []string{"Key"}},
			} {
				t.Run(c.name, func(t *testing.T) {
					testkit.WantProblem(t, e.do("POST", "/api/workflows", e.admin, c.body), 400, "validation_failed", c.fields...)
				})
			}
			r := e.app.Do(testkit.Request{Method: "POST", Path: "/api/workflows", Token: e.admin, ContentType: "text/plain",
				Body: `{"documentKind": "widget", "key": "k", "name": "n"}`})
			testkit.WantProblem(t, r, 415, "unsupported_media_type")
		})

		t.Run("replace", func(t *testing.T) {
			for _, c := range []struct {
				name  string
				body  string
				field string
			}{
				{"malformed JSON", `{"name": "x", "steps": [`, "Body"},
				{"two values", `{"name": "x"} {"name": "y"}`, "Body"},
				{"steps not a list", `{"name": "x", "steps": {"phase": "Draft"}}`, "Steps"},
				{"SLA hours as text", `{"name": "x", "steps": [{"phase": "Draft", "slaHours": "ten"}]}`, "Steps[0].SlaHours"},
				{"SLA hours with a fraction", `{"name": "x", "steps": [{"phase": "Draft", "slaHours": 1.5}]}`, "Steps[0].SlaHours"},
				{"terminal as text", `{"name": "x", "steps": [{"phase": "Draft"}, {"phase": "Done", "terminal": "yes"}]}`, "Steps[1].Terminal"},
				{"roles as text", `{"name": "x", "transitions": [{"from": "Draft", "to": "Review", "roles": "Drafter"}]}`, "Transitions[0].Roles"},
				{"a role as a number", `{"name": "x", "transitions": [{"from": "Draft", "to": "Review", "roles": ["Drafter", 7]}]}`, "Transitions[0].Roles[1]"},
				{"name as a list", `{"name": ["x"]}`, "Name"},
				{"name too long", `{"name": "` + strings.Repeat("n", 201) + `"}`, "Name"},
				{"control character in a phase", `{"name": "x", "steps": [{"phase": "Dr\u0007aft"}]}`, "Steps[0].Phase"},
				{"control character in a role", `{"name": "x", "transitions": [{"from": "a", "to": "b", "roles": ["x\u001by"]}]}`, "Transitions[0].Roles[0]"},
				{"too many steps", `{"name": "x", "steps": [` + strings.TrimSuffix(strings.Repeat(`{"phase": "Draft"},`, 101), ",") + `]}`, "Steps"},
			} {
				t.Run(c.name, func(t *testing.T) {
					testkit.WantProblem(t, e.do("PUT", "/api/workflows/"+d.ID, e.admin, c.body), 400, "validation_failed", c.field)
				})
			}
			// Nothing was written: the content and its time are as they were.
			got := e.get(t, d.ID)
			sameContent(t, got, stored.wfDraft)
			if !got.UpdatedAt.Equal(stored.UpdatedAt) {
				t.Errorf("updatedAt moved from %v to %v", stored.UpdatedAt, got.UpdatedAt)
			}
		})

		t.Run("a draft that breaks every rule is stored", func(t *testing.T) {
			wild := wfDraft{Name: "", InitialPhase: "Nowhere",
				Steps: []wfStep{
					{Phase: "Draft", SLAHours: -1, InboxRoles: []string{"Janitor", "Janitor"}, OnSLABreach: "panic"},
					{Phase: "Draft", SLAHours: 999999, InboxRoles: []string{}, OnSLABreach: "advance"},
					{Phase: strings.Repeat("P", 300), Terminal: true, InboxRoles: []string{}, OnSLABreach: "advance"},
				},
				Transitions: []wfMove{
					{From: "Draft", To: "Draft", Kind: "sideways", Roles: []string{"Drafter", "Drafter"}, Guard: "not a guard", Precondition: "x"},
					{From: "Draft", To: "Draft", Kind: "sideways", Roles: []string{}, Guard: "not a guard"},
				}}
			r := e.must(t, 200, "PUT", "/api/workflows/"+d.ID, wild)
			sameContent(t, e.def(t, r), wild)
			sameContent(t, e.get(t, d.ID), wild)
			var v wfValidation
			e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/validate", nil).JSON(t, &v)
			if v.Valid || len(v.Problems) < 10 {
				t.Fatalf("validate %+v", v)
			}
			testkit.WantProblem(t, e.do("POST", "/api/workflows/"+d.ID+"/publish", e.admin, nil), 400, "validation_failed")
			// Absent lists are stored empty, and answered as [].
			r = e.must(t, 200, "PUT", "/api/workflows/"+d.ID, map[string]any{"name": "Blank", "steps": nil})
			if s := string(r.Body); !strings.Contains(s, `"steps":[]`) || !strings.Contains(s, `"transitions":[]`) {
				t.Fatalf("blank draft %s", s)
			}
			// Server-owned properties in the body are ignored.
			e.must(t, 200, "PUT", "/api/workflows/"+d.ID, map[string]any{"name": "Owned", "id": one.ID, "key": "other", "version": 9,
				"status": "Published", "documentKind": "gizmo", "createdBy": "someone"})
			if got := e.get(t, d.ID); got.Key != "bad-input" || got.Version != 1 || got.Status != "Draft" || got.DocumentKind != "widget" || *got.CreatedBy != e.adminID {
				t.Fatalf("server-owned properties taken from the body: %+v", got)
			}
		})

		if n := e.count(t, "SELECT COUNT(*) FROM workflow_definitions"); n != definitions {
			t.Errorf("%d definitions after the refused requests, %d before", n, definitions)
		}
	})
}

// TestDesignerAssignments: every document type of every kind is listed;
// an assignment changes which definition new documents pin, while
// documents that pinned the old one keep it; a draft, an unknown id or a
// definition of another kind is refused.
func TestDesignerAssignments(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		ctx := context.Background()
		one, two, gizmo := e.seeded(t, "widget-one"), e.seeded(t, "widget-two"), e.seeded(t, "gizmo-default")
		assignments := func() map[string]string {
			var list []wfAssignment
			e.must(t, 200, "GET", "/api/workflows/assignments", nil).JSON(t, &list)
			out := map[string]string{}
			var types []string
			for _, a := range list {
				types = append(types, a.DocumentType)
				out[a.DocumentType] = fmt.Sprintf("%s v%d %s", *a.Key, *a.Version, *a.WorkflowDefinitionID)
			}
			if want := []string{"widget.a", "widget.b", "widget.c", "gizmo.x"}; !slices.Equal(types, want) {
				t.Fatalf("document types %v, want %v", types, want)
			}
			return out
		}
		want := map[string]string{
			"widget.a": "widget-one v1 " + one.ID, "widget.b": "widget-one v1 " + one.ID,
			"widget.c": "widget-two v1 " + two.ID, "gizmo.x": "gizmo-default v1 " + gizmo.ID,
		}
		if got := assignments(); !maps.Equal(got, want) {
			t.Fatalf("seeded assignments %v, want %v", got, want)
		}

		// A document of widget.b started now pins v1.
		before, err := e.kinds.eng.Start(ctx, "widget.b")
		if err != nil || before.Definition.ID != one.ID {
			t.Fatalf("start before: %+v, %v", before, err)
		}

		changed := validDraft()
		changed.step(t, "Draft").SLAHours = 30
		v2 := e.published(t, "widget-one", changed)
		var a wfAssignment
		e.must(t, 200, "PUT", "/api/workflows/assignments", map[string]any{"documentType": "widget.b", "workflowDefinitionId": v2.ID}).JSON(t, &a)
		if a.DocumentType != "widget.b" || *a.WorkflowDefinitionID != v2.ID || *a.Key != "widget-one" || *a.Version != 2 {
			t.Fatalf("assignment %+v", a)
		}
		want["widget.b"] = "widget-one v2 " + v2.ID
		if got := assignments(); !maps.Equal(got, want) {
			t.Fatalf("assignments %v, want %v", got, want)
		}

		// New documents pin v2 with its SLA; the one started before keeps v1.
		after, err := e.kinds.eng.Start(ctx, "widget.b")
		if err != nil || after.Definition.ID != v2.ID || after.Definition.Version != 2 || after.Deadline == nil ||
			e.kinds.eng.Remaining(*after.Deadline).Round(time.Second) != 30*time.Hour {
			t.Fatalf("start after: %+v, %v", after, err)
		}
		if def, err := e.kinds.eng.ForDocumentType(ctx, "widget.b"); err != nil || def.ID != v2.ID {
			t.Fatalf("ForDocumentType: %+v, %v", def, err)
		}
		pinned, err := e.kinds.eng.Definition(ctx, before.Definition.ID)
		if err != nil || pinned.Version != 1 || pinned.SLA("Draft") != 10*time.Hour {
			t.Fatalf("the pinned v1: %+v, %v", pinned, err)
		}
		if other, _ := e.kinds.eng.ForDocumentType(ctx, "widget.a"); other.ID != one.ID {
			t.Fatalf("widget.a moved to %s", other.ID)
		}

		draft := e.draft(t, "widget", "widget-one", nil)
		for _, c := range []struct {
			name   string
			body   any
			fields []string
		}{
			{"a draft", map[string]any{"documentType": "widget.a", "workflowDefinitionId": draft.ID}, []string{"WorkflowDefinitionId"}},
			{"an unknown id", map[string]any{"documentType": "widget.a", "workflowDefinitionId": "0190f5f2-7a3b-7c4d-8e5f-000000000001"}, []string{"WorkflowDefinitionId"}},
			{"another kind's definition", map[string]any{"documentType": "widget.a", "workflowDefinitionId": gizmo.ID}, []string{"WorkflowDefinitionId"}},
			{"an unknown document type", map[string]any{"documentType": "widget.z", "workflowDefinitionId": one.ID}, []string{"DocumentType"}},
			{"nothing", map[string]any{}, []string{"DocumentType", "WorkflowDefinitionId"}},
			{"wrong types", `{"documentType": 1, "workflowDefinitionId": "x"}`, []string{"DocumentType"}},
			{"malformed JSON", `{"documentType": "widget.a"`, []string{"Body"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				testkit.WantProblem(t, e.do("PUT", "/api/workflows/assignments", e.admin, c.body), 400, "validation_failed", c.fields...)
			})
		}
		if got := assignments(); !maps.Equal(got, want) {
			t.Fatalf("refused assignments changed %v", got)
		}
		// Assigning back is allowed: any published version of the kind.
		e.must(t, 200, "PUT", "/api/workflows/assignments", map[string]any{"documentType": "widget.b", "workflowDefinitionId": one.ID})
		if def, _ := e.kinds.eng.ForDocumentType(ctx, "widget.b"); def.ID != one.ID {
			t.Fatal("assigning v1 back did not take")
		}
	})
}

// TestDesignerConcurrentDrafts: drafts of one key created at the same
// moment get distinct versions, above the seeded one.
func TestDesignerConcurrentDrafts(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		for _, key := range []string{"widget-one", "brand-new"} {
			const n = 8
			versions := make([]int, n)
			statuses := make([]int, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					r := e.do("POST", "/api/workflows", e.admin, map[string]any{"documentKind": "widget", "key": key, "name": "Race"})
					statuses[i] = r.Status
					var d struct{ Version int }
					_ = json.Unmarshal(r.Body, &d)
					versions[i] = d.Version
				}()
			}
			close(start)
			wg.Wait()
			slices.Sort(versions)
			first := 1
			if key == "widget-one" {
				first = 2
			}
			for i, v := range versions {
				if statuses[i] != 201 || v != first+i {
					t.Fatalf("%s: statuses %v, versions %v", key, statuses, versions)
				}
			}
			if got := e.count(t, "SELECT COUNT(DISTINCT version) FROM workflow_definitions WHERE def_key = ?", key); got != int64(n+first-1) {
				t.Fatalf("%s: %d distinct versions stored", key, got)
			}
		}
	})
}

// TestDesignerConcurrentWrites races publication against editing, against
// itself and against deletion: whatever wins, a published definition holds
// content that was validated, and the loser is told why.
func TestDesignerConcurrentWrites(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		broken := validDraft()
		broken.step(t, "Review").SLAHours = 0
		race := func(a, b func() *testkit.Response) (ra, rb *testkit.Response) {
			var wg sync.WaitGroup
			start := make(chan struct{})
			wg.Add(2)
			go func() { defer wg.Done(); <-start; ra = a() }()
			go func() { defer wg.Done(); <-start; rb = b() }()
			close(start)
			wg.Wait()
			return ra, rb
		}
		code := func(r *testkit.Response) string {
			var p struct{ Code string }
			_ = json.Unmarshal(r.Body, &p)
			return fmt.Sprint(r.Status, " ", p.Code)
		}
		for round := range 6 {
			content := validDraft()
			d := e.draft(t, "widget", fmt.Sprintf("race-%d", round), &content)
			pub, put := race(
				func() *testkit.Response { return e.do("POST", "/api/workflows/"+d.ID+"/publish", e.admin, nil) },
				func() *testkit.Response { return e.do("PUT", "/api/workflows/"+d.ID, e.admin, broken) },
			)
			got := e.get(t, d.ID)
			switch {
			case pub.Status == 200: // published first: the edit is refused, the content is the valid one
				if code(put) != "409 not_editable" || got.Status != "Published" {
					t.Fatalf("round %d: publish won, PUT %s, status %s", round, code(put), got.Status)
				}
				sameContent(t, got, content)
			case put.Status == 200: // edited first: the broken draft is not published
				if c := code(pub); c != "400 validation_failed" && c != "409 stale_version" {
					t.Fatalf("round %d: PUT won, publish %s", round, c)
				}
				if got.Status != "Draft" {
					t.Fatalf("round %d: the broken draft was published", round)
				}
				sameContent(t, got, broken)
			default:
				t.Fatalf("round %d: publish %s, PUT %s", round, code(pub), code(put))
			}
			if got.Status == "Published" {
				var v wfValidation
				e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/validate", nil).JSON(t, &v)
				if !v.Valid {
					t.Fatalf("round %d: published and invalid: %+v", round, v.Problems)
				}
			}
		}
		for round := range 4 {
			content := validDraft()
			d := e.draft(t, "widget", fmt.Sprintf("twice-%d", round), &content)
			a, b := race(
				func() *testkit.Response { return e.do("POST", "/api/workflows/"+d.ID+"/publish", e.admin, nil) },
				func() *testkit.Response { return e.do("POST", "/api/workflows/"+d.ID+"/publish", e.admin, nil) },
			)
			if got := []string{code(a), code(b)}; !slices.Contains(got, "200 ") || !slices.Contains(got, "409 not_editable") {
				t.Fatalf("publish twice: %v", got)
			}
			if n := e.count(t, "SELECT COUNT(*) FROM workflow_steps WHERE definition_id = ?", d.ID); n != 4 {
				t.Fatalf("publish twice wrote %d steps", n)
			}
		}
		for round := range 4 {
			content := validDraft()
			d := e.draft(t, "widget", fmt.Sprintf("gone-%d", round), &content)
			pub, del := race(
				func() *testkit.Response { return e.do("POST", "/api/workflows/"+d.ID+"/publish", e.admin, nil) },
				func() *testkit.Response { return e.do("DELETE", "/api/workflows/"+d.ID, e.admin, nil) },
			)
			switch got := code(pub) + " / " + code(del); got {
			case "200  / 409 not_deletable":
				if e.get(t, d.ID).Status != "Published" {
					t.Fatal("published, then gone")
				}
			case "404 not_found / 204 ":
				if n := e.count(t, "SELECT COUNT(*) FROM workflow_steps WHERE definition_id = ?", d.ID); n != 0 {
					t.Fatalf("deleted, with %d steps left", n)
				}
			default:
				t.Fatalf("publish and delete: %s", got)
			}
		}
	})
}

// TestDesignerNeverCachesDrafts: the engine serves a draft as it is now,
// through edits and publication, and the published version as published.
func TestDesignerNeverCachesDrafts(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		ctx := context.Background()
		content := validDraft()
		d := e.draft(t, "widget", "cached", &content)
		def, err := e.kinds.eng.Definition(ctx, d.ID)
		if err != nil || def.Published || def.SLA("Draft") != 10*time.Hour {
			t.Fatalf("draft %+v, %v", def, err)
		}
		content.step(t, "Draft").SLAHours = 11
		e.must(t, 200, "PUT", "/api/workflows/"+d.ID, content)
		if def, _ := e.kinds.eng.Definition(ctx, d.ID); def.SLA("Draft") != 11*time.Hour || def.Published {
			t.Fatalf("stale draft served: %+v", def)
		}
		e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/publish", nil)
		def, err = e.kinds.eng.Definition(ctx, d.ID)
		if err != nil || !def.Published || def.SLA("Draft") != 11*time.Hour {
			t.Fatalf("published %+v, %v", def, err)
		}
		published, _ := e.kinds.eng.Published(ctx, "widget")
		if !slices.ContainsFunc(published, func(p *workflowdesigner.Definition) bool { return p.ID == d.ID }) {
			t.Error("Published lacks the new version")
		}
	})
}

// TestDesignerRolesAreIdentity's: the roles a workflow may name are the
// ones the identity module serves.
func TestDesignerRolesAreIdentitys(t *testing.T) {
	e := startDesigner(t, "sqlite")
	var roles []struct{ Name string }
	e.must(t, 200, "GET", "/api/roles", nil).JSON(t, &roles)
	var names []string
	for _, r := range roles {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(identity.Roles()))
	if !slices.Equal(names, want) || len(want) != 12 {
		t.Fatalf("GET /api/roles %v, identity.Roles() %v", names, want)
	}
}

// TestDesignerOpenAPIMatchesRoutes: every route the module serves is
// documented and every documented operation under /api/workflows is
// served, the designer's nine among them.
func TestDesignerOpenAPIMatchesRoutes(t *testing.T) {
	e := startDesigner(t, "sqlite")
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
		if strings.HasPrefix(op.Path, "/api/workflows") {
			documented = append(documented, op.String())
		}
	}
	for _, r := range e.app.Kernel.Routes() {
		if r.Module == "workflowdesigner" {
			mounted = append(mounted, r.Method+" "+openapi.OpenAPIPath(r.Path))
		}
	}
	slices.Sort(documented)
	slices.Sort(mounted)
	if !slices.Equal(documented, mounted) {
		t.Fatalf("documented %v\nmounted    %v", documented, mounted)
	}
	for _, op := range []string{"GET /api/workflows", "POST /api/workflows", "GET /api/workflows/assignments", "PUT /api/workflows/assignments",
		"GET /api/workflows/{id}", "PUT /api/workflows/{id}", "DELETE /api/workflows/{id}", "POST /api/workflows/{id}/validate",
		"POST /api/workflows/{id}/publish"} {
		if !slices.Contains(mounted, op) {
			t.Errorf("%s is not served", op)
		}
	}
}

// TestPublishedListFollowsPublication: the published definitions every
// scope is built from (kept in memory on SQLite) include a publication as
// soon as it has returned, and never a draft.
func TestPublishedListFollowsPublication(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startDesigner(t, driver)
		ctx := context.Background()
		ids := func() []string {
			t.Helper()
			defs, err := e.kinds.eng.Published(ctx, "widget")
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, d := range defs {
				out = append(out, d.ID)
			}
			slices.Sort(out)
			return out
		}
		director := authn.Principal{UserID: "someone", Roles: []string{"Director"}}
		inScope := func(id string) bool {
			t.Helper()
			sc, err := e.kinds.eng.Scope(ctx, "widget", director)
			if err != nil {
				t.Fatal(err)
			}
			_, args := sc.Inbox()
			return strings.Contains(fmt.Sprint(args), id)
		}
		before := ids() // read twice: the second answer may come from memory
		if again := ids(); !slices.Equal(again, before) || len(before) == 0 {
			t.Fatalf("published %v, then %v", before, again)
		}
		content := validDraft()
		d := e.draft(t, "widget", "widget-cached", &content)
		if got := ids(); !slices.Equal(got, before) || inScope(d.ID) {
			t.Fatalf("a draft is listed as published: %v (before %v)", got, before)
		}
		e.must(t, 200, "POST", "/api/workflows/"+d.ID+"/publish", nil)
		want := append(slices.Clone(before), d.ID)
		slices.Sort(want)
		if got := ids(); !slices.Equal(got, want) {
			t.Fatalf("after publishing %s: published %v, want %v", d.ID, got, want)
		}
		if !inScope(d.ID) {
			t.Fatalf("a Director's inbox scope leaves out the definition just published")
		}
	})
}
