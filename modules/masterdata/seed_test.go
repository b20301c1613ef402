package masterdata_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/testkit"
)

// The demo seed holds a supplier of every type, projects and departments;
// seeding again adds nothing, and a seeded record a user deleted stays
// deleted.
func TestDemoSeed(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d, testkit.WithConfig("seed.demo", true))
		suppliers := list(t, app, admin, "/api/suppliers?pageSize=100")
		types := map[string]bool{}
		for _, s := range suppliers.Items {
			types[s["supplierType"].(string)] = true
			if s["taxCode"] == nil || s["createdBy"] != nil {
				t.Errorf("seeded supplier %v: want a tax code and no creator", s)
			}
		}
		if len(types) != 5 {
			t.Errorf("seeded supplier types %v, want all five", types)
		}
		if got := list(t, app, admin, "/api/projects?search=da00").codes(); !slices.Equal(got, []string{"DA001", "DA002", "DA003"}) {
			t.Errorf("seeded projects %v", got)
		}
		deps := list(t, app, admin, "/api/departments?pageSize=100").codes()
		for _, want := range []string{"PRO", "CCM", "FIN", "ACT", "EQU", "HCNS"} {
			if !slices.Contains(deps, want) {
				t.Errorf("departments %v lack %s", deps, want)
			}
		}
		counts := func() [3]int {
			return [3]int{count(t, app, admin, "/api/suppliers"), count(t, app, admin, "/api/projects"), count(t, app, admin, "/api/departments")}
		}
		before := counts()

		if err := app.Kernel.Seed(t.Context()); err != nil {
			t.Fatal(err)
		}
		if after := counts(); after != before {
			t.Errorf("seeding again: %v records, want %v", after, before)
		}

		first := suppliers.Items[0]
		do(t, app, "DELETE", "/api/suppliers/"+first["id"].(string), admin, nil)
		if err := app.Kernel.Seed(t.Context()); err != nil {
			t.Fatal(err)
		}
		if p := list(t, app, admin, "/api/suppliers?search="+first["code"].(string)); p.TotalCount != 0 {
			t.Errorf("seeding brought back the deleted %s", first["code"])
		}
	})
}

// Every route of the module is documented, and every documented operation
// under its paths is served.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	app, _ := start(t, "sqlite")
	doc, err := app.Kernel.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := openapi.Operations(doc)
	if err != nil {
		t.Fatal(err)
	}
	ours := func(path string) bool {
		return slices.ContainsFunc(kinds, func(k kind) bool { return strings.HasPrefix(path, k.path) })
	}
	var documented, mounted []string
	for _, op := range ops {
		if ours(op.Path) {
			documented = append(documented, op.String())
		}
	}
	for _, r := range app.Kernel.Routes() {
		if r.Module == "masterdata" {
			mounted = append(mounted, r.Method+" "+openapi.OpenAPIPath(r.Path))
		} else if ours(r.Path) {
			t.Errorf("module %s serves %s %s", r.Module, r.Method, r.Path)
		}
	}
	slices.Sort(documented)
	slices.Sort(mounted)
	if !slices.Equal(documented, mounted) || len(mounted) != 15 {
		t.Errorf("documented %v\nmounted    %v", documented, mounted)
	}
}
