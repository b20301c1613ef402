package masterdata_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// factsProbe stands for a module that knows more about suppliers (as
// procurement does): it registers SupplierFacts at provision.
type factsProbe struct{ fail bool }

func (*factsProbe) Info() kernel.Info {
	return kernel.Info{Name: "factsprobe", Requires: []string{"masterdata"}}
}

func (p *factsProbe) Provision(_ context.Context, app *kernel.App) error {
	reg, err := kernel.Need[masterdata.SupplierFactsRegistry](app)
	if err != nil {
		return err
	}
	reg.AddSupplierFacts(p)
	return nil
}

func (p *factsProbe) SupplierFacts(_ context.Context, id string) (map[string]any, error) {
	if p.fail {
		return nil, errors.New("probe failed")
	}
	// "code" is the supplier's own property: a fact never replaces it.
	return map[string]any{"approvedEvaluations": 2, "lastApprovedAt": "2026-03-10T02:00:00Z", "code": "NOT-" + id}, nil
}

// GET /api/suppliers/{id} adds the facts registered modules know, only
// there, and never over the supplier's own properties; without such a
// module the supplier is as master data stores it.
func TestSupplierFacts(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		probe := &factsProbe{}
		app, admin := start(t, d, testkit.WithModules(
			func() kernel.Module { return identity.New() },
			func() kernel.Module { return masterdata.New() },
			func() kernel.Module { return probe },
		))
		code := newCode("F-")
		s := create(t, app, admin, "/api/suppliers", kinds[0].body(code))
		if _, ok := s["approvedEvaluations"]; ok {
			t.Errorf("POST answers facts: %v", s)
		}
		got := get(t, app, admin, "/api/suppliers/"+s["id"].(string))
		if got["approvedEvaluations"] != 2.0 || got["lastApprovedAt"] != "2026-03-10T02:00:00Z" || got["code"] != code || got["version"] != 1.0 {
			t.Errorf("supplier with facts: %v", got)
		}
		if items := list(t, app, admin, "/api/suppliers?search="+code).Items; len(items) != 1 || items[0]["approvedEvaluations"] != nil {
			t.Errorf("the list carries facts: %v", items)
		}
		probe.fail = true
		if r := do(t, app, "GET", "/api/suppliers/"+s["id"].(string), admin, nil); r.Status != 500 {
			t.Errorf("failing facts: %d %s", r.Status, r.Body)
		}
		probe.fail = false

		// Without a module that adds facts, the fields are absent.
		bare, bareAdmin := start(t, d)
		s = create(t, bare, bareAdmin, "/api/suppliers", kinds[0].body(newCode("F-")))
		got = get(t, bare, bareAdmin, "/api/suppliers/"+s["id"].(string))
		if _, ok := got["approvedEvaluations"]; ok {
			t.Errorf("facts without a module that adds them: %v", got)
		}
	})
}

// SearchProjectIDs finds live projects by code or name as the list does.
func TestSearchProjectIDs(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		lookup, err := kernel.Need[masterdata.Lookup](app.Kernel.App())
		if err != nil {
			t.Fatal(err)
		}
		p := create(t, app, admin, "/api/projects", map[string]any{"code": newCode("PS-"), "name": "Nhà xưởng Bình Dương"})
		gone := create(t, app, admin, "/api/projects", map[string]any{"code": newCode("PS-"), "name": "Nhà xưởng cũ"})
		do(t, app, "DELETE", "/api/projects/"+gone["id"].(string), admin, nil)
		got, err := lookup.SearchProjectIDs(t.Context(), "nha xuong", 10)
		if err != nil || !slices.Equal(got, []string{p["id"].(string)}) {
			t.Errorf("search: %v %v", got, err)
		}
		if got, err := lookup.SearchProjectIDs(t.Context(), p["code"].(string), 10); err != nil || len(got) != 1 {
			t.Errorf("by code: %v %v", got, err)
		}
	})
}
