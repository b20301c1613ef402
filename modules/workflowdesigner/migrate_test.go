package workflowdesigner_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestMigrationEndpoints: GET /api/workflows/{id}/in-flight and POST
// /api/workflows/{id}/migrate over HTTP, with their refusals.
func TestMigrationEndpoints(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		g, app, _ := startGadgets(t, d, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
		ctx := context.Background()
		admin := identitytest.AdminToken(t, app)
		_, _, drafterToken := identitytest.NewUser(t, app, "Drafter")
		def := func(docType string) *workflowdesigner.Definition {
			d, err := g.eng.ForDocumentType(ctx, docType)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		from, remind, short := def("gadget"), def("gadget.remind"), def("gadget.short")
		drafter := user("Drafter")
		first := g.newGadget(t, drafter.UserID, false, false)
		second := g.newGadget(t, drafter.UserID, false, false)
		if _, err := g.eng.Move(ctx, workflowdesigner.MoveRequest{Kind: "gadget", Doc: second, To: "Review", By: drafter}); err != nil {
			t.Fatal(err)
		}
		do := func(method, path, token string, body any) *testkit.Response {
			return app.Do(testkit.Request{Method: method, Path: path, Token: token, Body: body})
		}
		inFlight := "/api/workflows/" + from.ID + "/in-flight"
		migrate := "/api/workflows/" + from.ID + "/migrate"

		var plan workflowdesigner.InFlight
		r := do("GET", inFlight, admin, nil)
		if r.Status != 200 {
			t.Fatalf("in-flight: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &plan)
		if plan.Total != 2 || len(plan.ByPhase) != 2 {
			t.Fatalf("plan %+v", plan)
		}

		cases := []struct {
			name, method, path, token string
			body                      any
			status                    int
			code                      string
			field                     string
		}{
			{"in-flight without a token", "GET", inFlight, "", nil, 401, "", ""},
			{"in-flight without Workflows.Read", "GET", inFlight, drafterToken, nil, 403, "forbidden", ""},
			{"in-flight of an unknown definition", "GET", "/api/workflows/" + uuid.Must(uuid.NewV7()).String() + "/in-flight", admin, nil, 404, "not_found", ""},
			{"in-flight of a malformed id", "GET", "/api/workflows/nope/in-flight", admin, nil, 404, "not_found", ""},
			{"migrate without a token", "POST", migrate, "", map[string]any{"toDefinitionId": remind.ID}, 401, "", ""},
			{"migrate without Workflows.Update", "POST", migrate, drafterToken, map[string]any{"toDefinitionId": remind.ID}, 403, "forbidden", ""},
			{"migrate without a target", "POST", migrate, admin, map[string]any{}, 400, "validation_failed", "ToDefinitionId"},
			{"migrate to an unknown target", "POST", migrate, admin, map[string]any{"toDefinitionId": uuid.Must(uuid.NewV7()).String()}, 400, "validation_failed", "ToDefinitionId"},
			{"migrate with a wrong type", "POST", migrate, admin, map[string]any{"toDefinitionId": remind.ID, "dryRun": "yes"}, 400, "validation_failed", ""},
			{"migrate onto a definition lacking Review", "POST", migrate, admin, map[string]any{"toDefinitionId": short.ID}, 409, "invalid_transition", ""},
		}
		for _, tc := range cases {
			r := do(tc.method, tc.path, tc.token, tc.body)
			if r.Status != tc.status {
				t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
				continue
			}
			if tc.code == "" {
				continue
			}
			p := r.Problem(t)
			if p.Code != tc.code {
				t.Errorf("%s: code %s", tc.name, p.Code)
			}
			if _, ok := p.Errors[tc.field]; tc.field != "" && !ok {
				t.Errorf("%s: errors %v", tc.name, p.Errors)
			}
		}
		if n := g.count(t, "SELECT COUNT(*) FROM gadgets WHERE workflow_definition_id = ?", from.ID); n != 2 {
			t.Fatalf("refusals moved documents: %d left", n)
		}

		r = do("POST", migrate, admin, map[string]any{"toDefinitionId": short.ID, "dryRun": true})
		if r.Status != 200 {
			t.Fatalf("dry run: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &plan)
		if plan.Total != 2 || plan.ByPhase[1].Phase != "Review" || plan.ByPhase[1].Mapped == nil || *plan.ByPhase[1].Mapped {
			t.Fatalf("dry run %+v", plan)
		}
		if r := do("POST", migrate, admin, map[string]any{"toDefinitionId": remind.ID}); r.Status != 200 {
			t.Fatalf("migrate: %d %s", r.Status, r.Body)
		}
		if g.doc(t, first.ID).DefinitionID != remind.ID || g.doc(t, second.ID).DefinitionID != remind.ID {
			t.Fatal("documents not re-pinned")
		}
		r = do("GET", inFlight, admin, nil)
		r.JSON(t, &plan)
		if plan.Total != 0 || len(plan.ByPhase) != 0 {
			t.Fatalf("after: %+v", plan)
		}
	})
}

// TestSLAConfig: the sla section refuses values the runtime cannot use,
// naming the key.
func TestSLAConfig(t *testing.T) {
	for _, tc := range []struct {
		key  string
		val  any
		want string
	}{
		{"sla.calendar", "days", "sla.calendar"},
		{"sla.reminderHours", 0, "sla.reminderHours"},
		{"sla.jobInterval", "10ms", "sla.jobInterval"},
		{"sla.warningHours", -1, "sla.warningHours"},
	} {
		set := testkit.Isolated(t, "sqlite")
		set[tc.key] = tc.val
		k, err := kernel.New(kernel.Options{Set: set, Environ: []string{}, LogOutput: io.Discard, Modules: []kernel.Factory{
			func() kernel.Module { return identity.New() },
			func() kernel.Module { return workflowdesigner.New() },
		}})
		if err == nil {
			err = k.Start(context.Background())
			_ = k.Close(context.Background())
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s = %v: %v", tc.key, tc.val, err)
		}
	}
}
