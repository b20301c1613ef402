package masterdata_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/testkit"
)

// kind is one resource as the tests drive it: its path, its policy key and
// a valid body for a code.
type kind struct {
	name, path, menu string
	kind             masterdata.Kind
	body             func(code string) map[string]any
}

var kinds = []kind{
	{"suppliers", "/api/suppliers", "Suppliers", masterdata.KindSupplier, func(code string) map[string]any {
		return map[string]any{"code": code, "name": "Công ty TNHH " + code, "supplierType": "Material", "taxCode": "0101234567"}
	}},
	{"projects", "/api/projects", "Projects", masterdata.KindProject, func(code string) map[string]any {
		return map[string]any{"code": code, "name": "Dự án " + code, "status": "Active", "startDate": "2026-01-01", "endDate": "2026-12-31"}
	}},
	{"departments", "/api/departments", "Departments", masterdata.KindDepartment, func(code string) map[string]any {
		return map[string]any{"code": code, "name": "Phòng " + code}
	}},
}

var codeSeq atomic.Int64

// newCode returns a code no other test uses.
func newCode(prefix string) string { return fmt.Sprintf("%s%04d", prefix, codeSeq.Add(1)) }

// record is a response body, loosely typed.
type record = map[string]any

func do(t testing.TB, app *testkit.App, method, path, token string, body any) *testkit.Response {
	t.Helper()
	return app.Do(testkit.Request{Method: method, Path: path, Token: token, Body: body})
}

// create posts body and returns the created record, failing unless 201.
func create(t testing.TB, app *testkit.App, token, path string, body any) record {
	t.Helper()
	r := do(t, app, "POST", path, token, body)
	if r.Status != 201 {
		t.Fatalf("POST %s: status %d: %s", path, r.Status, r.Body)
	}
	var out record
	r.JSON(t, &out)
	return out
}

// fetch GETs path into out, failing unless 200.
func fetch(t testing.TB, app *testkit.App, token, path string, out any) {
	t.Helper()
	r := do(t, app, "GET", path, token, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: status %d: %s", path, r.Status, r.Body)
	}
	r.JSON(t, out)
}

// get fetches one record.
func get(t testing.TB, app *testkit.App, token, path string) (out record) {
	t.Helper()
	fetch(t, app, token, path, &out)
	return out
}

// page is a list response.
type page struct {
	Items      []record
	Page       int
	PageSize   int
	TotalCount int
	TotalPages int
}

func list(t testing.TB, app *testkit.App, token, pathAndQuery string) (p page) {
	t.Helper()
	fetch(t, app, token, pathAndQuery, &p)
	return p
}

// codes lists the codes of a page's items, in order.
func (p page) codes() []string {
	out := make([]string, len(p.Items))
	for i, it := range p.Items {
		out[i], _ = it["code"].(string)
	}
	return out
}

// count is the number of live records of a resource.
func count(t testing.TB, app *testkit.App, token, path string) int {
	t.Helper()
	return list(t, app, token, path+"?pageSize=1").TotalCount
}

// start runs an instance with the identity and masterdata modules.
func start(t testing.TB, driver string, opts ...testkit.Option) (*testkit.App, string) {
	t.Helper()
	app := identitytest.Start(t, driver, opts...)
	return app, identitytest.AdminToken(t, app)
}

// eachKind starts an instance per database and runs fn on it for each
// resource, as subtests.
func eachKind(t *testing.T, fn func(t *testing.T, app *testkit.App, admin string, k kind)) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		for _, k := range kinds {
			t.Run(k.name, func(t *testing.T) { fn(t, app, admin, k) })
		}
	})
}

// userID returns the id of the token's user.
func userID(t testing.TB, app *testkit.App, token string) string {
	t.Helper()
	return get(t, app, token, "/api/auth/me")["id"].(string)
}
