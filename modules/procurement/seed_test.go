package procurement_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/testkit"
)

// The two default definitions are published as v1, assigned to the
// policies' document types, and hold DESIGN §7's moves.
func TestSeededDefinitions(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		wf, ok := kernel.Lookup[workflowdesigner.Engine](e.app.Kernel.App())
		if !ok {
			t.Fatal("no workflow engine")
		}
		for policy, key := range map[string]string{"A": "purchase-evaluation-a", "B": "purchase-evaluation-b"} {
			def, err := wf.ForDocumentType(context.Background(), "purchaseEvaluation."+policy)
			if err != nil {
				t.Fatal(err)
			}
			if def.Key != key || def.Version != 1 || !def.Published || def.DocumentKind != "purchaseEvaluation" || def.InitialPhase != DangSoanThao {
				t.Errorf("%s: %+v", policy, def.Spec)
			}
			var got []string
			for _, tr := range def.Transitions {
				got = append(got, tr.From+">"+tr.To+":"+string(tr.Kind)+":"+strings.Join(sorted(tr.Roles), ",")+":"+tr.Precondition)
			}
			var want []string
			for _, m := range designMoves(policy) {
				pre := ""
				switch {
				case m.from == DangSoanThao:
					pre = "readyToSubmit"
				case m.from == ChoYKienPhongBan && m.kind == "forward":
					pre = "opinionsComplete"
				}
				want = append(want, m.from+">"+m.to+":"+m.kind+":"+strings.Join(sorted(m.roles), ",")+":"+pre)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s moves\n got %v\nwant %v", policy, got, want)
			}
			for _, s := range def.Steps {
				if !s.Terminal && !slices.Equal(sorted(s.InboxRoles), sorted(inboxOf(policy, s.Phase))) {
					t.Errorf("%s %s inbox %v", policy, s.Phase, s.InboxRoles)
				}
				if s.Breach() != workflowdesigner.BreachAdvance {
					t.Errorf("%s %s breach %s", policy, s.Phase, s.Breach())
				}
			}
		}
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// With seed.demo the demo evaluations sit in several phases of both
// policies; seeding again adds nothing.
func TestDemoSeed(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d, testkit.WithConfig("seed.demo", true), testkit.WithConfig("modules.forms.enabled", false),
			testkit.WithConfig("rateLimit.enabled", false))
		e := &env{app: app, admin: identitytest.AdminToken(t, app)}
		p := e.list(t, e.admin, "?pageSize=100")
		phases := map[string]bool{}
		policies := map[string]bool{}
		for _, v := range p.Items {
			phases[v.Policy+" "+v.Phase] = true
			policies[v.Policy] = true
		}
		for _, want := range []string{"A DangSoanThao", "A ChoDuAn", "A DaDuyet", "B ChoYKienPhongBan", "B ChoCCMKiemTra", "B TuChoi"} {
			if !phases[want] {
				t.Errorf("no demo evaluation in %s (have %v)", want, phases)
			}
		}
		if err := app.Kernel.Seed(context.Background()); err != nil {
			t.Fatal(err)
		}
		if again := e.list(t, e.admin, "?pageSize=1"); again.TotalCount != p.TotalCount {
			t.Errorf("seeding again: %d evaluations, was %d", again.TotalCount, p.TotalCount)
		}
		// The demo's approved evaluation shows on its supplier.
		var approved evaluation
		for _, v := range p.Items {
			if v.Phase == DaDuyet {
				approved = e.get(t, e.admin, v.ID)
			}
		}
		for _, q := range approved.Quotations {
			if q.Selected {
				var s map[string]any
				e.do("GET", "/api/suppliers/"+q.SupplierID, e.admin, nil).JSON(t, &s)
				if s["approvedEvaluations"] != 1.0 {
					t.Errorf("demo winner %s: %v", q.Supplier.Code, s["approvedEvaluations"])
				}
			}
		}
	})
}

// Every route of the module is documented, and every documented operation
// under its path is served.
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
		if strings.HasPrefix(op.Path, base) {
			documented = append(documented, op.String())
		}
	}
	for _, r := range e.app.Kernel.Routes() {
		if r.Module == "procurement" {
			mounted = append(mounted, r.Method+" "+openapi.OpenAPIPath(r.Path))
		} else if strings.HasPrefix(r.Path, base) {
			t.Errorf("module %s serves %s %s", r.Module, r.Method, r.Path)
		}
	}
	slices.Sort(documented)
	slices.Sort(mounted)
	if !slices.Equal(documented, mounted) || len(mounted) != 13 {
		t.Errorf("documented %v\nmounted    %v", documented, mounted)
	}
}

// Bad procurement.* values stop the start, naming the key.
func TestConfigValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key   string
		value any
	}{
		{"procurement.policyBThreshold", "lots"},
		{"procurement.policyBThreshold", -1},
		{"procurement.policyBThreshold", "1.005"},
		{"procurement.minQuotations.A", 0},
		{"procurement.minQuotations.B", 51},
		{"procurement.requiredOpinions", []string{"PRO", "XYZ"}},
		{"procurement.requiredOpinions", []string{"PRO", "PRO"}},
	}
	for _, tc := range cases {
		k, err := kernel.New(kernel.Options{Set: mergeSet(testkit.Isolated(t, "sqlite"), map[string]any{tc.key: tc.value}), Environ: []string{}})
		if err == nil {
			err = k.Start(context.Background())
			_ = k.Close(context.Background())
		}
		if err == nil || !strings.Contains(err.Error(), strings.SplitN(tc.key, ".", 3)[0]+"."+strings.SplitN(tc.key, ".", 3)[1]) {
			t.Errorf("%s = %v: %v", tc.key, tc.value, err)
		}
	}
	// Good values start, and a lower threshold makes policy B the default.
	e := start(t, "sqlite", testkit.WithConfig("procurement.policyBThreshold", "1000"), testkit.WithConfig("procurement.minQuotations.B", 1),
		testkit.WithConfig("procurement.requiredOpinions", "FIN, EQU"))
	v := e.create(t, e.token("Procurement"), map[string]any{"estimatedValue": 1000})
	if v.Policy != "B" || !slices.Equal(v.RequiredOpinions, []string{"FIN", "EQU"}) {
		t.Errorf("policy %s, required %v", v.Policy, v.RequiredOpinions)
	}
}

func mergeSet(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}
