package masterdata_test

import (
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
)

// with returns a copy of body with key set (or removed, for a nil value).
func with(body map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// invalid is one bad body and the fields it must name.
type invalid struct {
	name   string
	body   any // a map, or raw text sent as JSON
	fields []string
}

// sharedInvalid are the bad bodies every resource refuses the same way.
func sharedInvalid(valid map[string]any) []invalid {
	return []invalid{
		{"code with a space", with(valid, "code", "AB CD"), []string{"Code"}},
		{"code with a letter outside A-Z", with(valid, "code", "ĐA01"), []string{"Code"}},
		{"code with a dot", with(valid, "code", "DA.01"), []string{"Code"}},
		{"code of one character", with(valid, "code", "A"), []string{"Code"}},
		{"code of 33 characters", with(valid, "code", strings.Repeat("A", 33)), []string{"Code"}},
		{"code missing", with(valid, "code", nil), []string{"Code"}},
		{"code blank", with(valid, "code", "   "), []string{"Code"}},
		{"name missing", with(valid, "name", nil), []string{"Name"}},
		{"name blank", with(valid, "name", "  "), []string{"Name"}},
		{"name of 201 characters", with(valid, "name", strings.Repeat("ắ", 201)), []string{"Name"}},
		{"code as a number", with(valid, "code", 12), []string{"Code"}},
		{"name as an object", with(valid, "name", map[string]any{"vi": "x"}), []string{"Name"}},
		{"isActive as a string", with(valid, "isActive", "yes"), []string{"IsActive"}},
		{"version as a string", with(valid, "version", "1"), []string{"Version"}},
		{"every shared field at once", with(valid, "code", "a", "name", ""), []string{"Code", "Name"}},
		{"malformed JSON", `{"code": "AB",`, []string{"Body"}},
		{"not an object", `["AB"]`, []string{"Body"}},
		{"empty body", ``, []string{"Body"}},
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		managerID, _, _ := identitytest.NewUser(t, app)
		const unknownUser = "0190a5c4-0000-7000-8000-000000000000"
		own := map[string][]invalid{
			"suppliers": {
				{"unknown supplierType", with(kinds[0].body("X1"), "supplierType", "Foo"), []string{"SupplierType"}},
				{"supplierType in lower case", with(kinds[0].body("X1"), "supplierType", "material"), []string{"SupplierType"}},
				{"supplierType missing", with(kinds[0].body("X1"), "supplierType", nil), []string{"SupplierType"}},
				{"supplierType as a number", with(kinds[0].body("X1"), "supplierType", 1), []string{"SupplierType"}},
				{"tax code of 9 digits", with(kinds[0].body("X1"), "taxCode", "010123456"), []string{"TaxCode"}},
				{"tax code of 11 digits", with(kinds[0].body("X1"), "taxCode", "01012345678"), []string{"TaxCode"}},
				{"tax code with a letter", with(kinds[0].body("X1"), "taxCode", "010123456A"), []string{"TaxCode"}},
				{"branch tax code too short", with(kinds[0].body("X1"), "taxCode", "0101234567-01"), []string{"TaxCode"}},
				{"tax code as a number", with(kinds[0].body("X1"), "taxCode", 101234567), []string{"TaxCode"}},
				{"bad email", with(kinds[0].body("X1"), "email", "not-an-email"), []string{"Email"}},
				{"notes too long", with(kinds[0].body("X1"), "notes", strings.Repeat("n", 2001)), []string{"Notes"}},
				{"several fields", with(kinds[0].body("x"), "name", "", "supplierType", "Foo", "taxCode", "1", "email", "@"),
					[]string{"Code", "Name", "SupplierType", "TaxCode", "Email"}},
			},
			"projects": {
				{"unknown status", with(kinds[1].body("X1"), "status", "Done"), []string{"Status"}},
				{"start date not ISO", with(kinds[1].body("X1"), "startDate", "21/11/2026"), []string{"StartDate"}},
				{"impossible end date", with(kinds[1].body("X1"), "endDate", "2026-02-30"), []string{"EndDate"}},
				{"start date as a number", with(kinds[1].body("X1"), "startDate", 20261121), []string{"StartDate"}},
				{"end before start", with(kinds[1].body("X1"), "startDate", "2026-11-21", "endDate", "2026-11-20"), []string{"EndDate"}},
				{"unknown manager", with(kinds[1].body("X1"), "managerUserId", unknownUser), []string{"ManagerUserId"}},
				{"manager not a UUID", with(kinds[1].body("X1"), "managerUserId", "bob"), []string{"ManagerUserId"}},
			},
			"departments": {
				{"unknown manager", with(kinds[2].body("X1"), "managerUserId", unknownUser), []string{"ManagerUserId"}},
				{"manager as a number", with(kinds[2].body("X1"), "managerUserId", 7), []string{"ManagerUserId"}},
			},
		}
		for _, k := range kinds {
			t.Run(k.name, func(t *testing.T) {
				existing := create(t, app, admin, k.path, k.body(newCode("OK-")))
				one := k.path + "/" + existing["id"].(string)
				before := count(t, app, admin, k.path)
				var scenarios []testkit.Scenario
				for _, c := range append(sharedInvalid(k.body("X1")), own[k.name]...) {
					put := c.body
					if m, ok := c.body.(map[string]any); ok {
						put = with(m, "version", m["version"]) // unchanged; PUT takes the same body
					}
					scenarios = append(scenarios,
						testkit.Scenario{Name: "POST " + c.name, Request: testkit.Request{Method: "POST", Path: k.path, Token: admin, Body: c.body},
							Status: 400, Code: "validation_failed", Fields: c.fields},
						testkit.Scenario{Name: "PUT " + c.name, Request: testkit.Request{Method: "PUT", Path: one, Token: admin, Body: put},
							Status: 400, Code: "validation_failed", Fields: c.fields})
				}
				scenarios = append(scenarios,
					testkit.Scenario{Name: "body over 1 MiB", Request: testkit.Request{Method: "POST", Path: k.path, Token: admin, Body: with(k.body("X1"), "notes", strings.Repeat("n", 1<<20))},
						Status: 413, Code: "payload_too_large"},
					testkit.Scenario{Name: "not JSON", Request: testkit.Request{Method: "POST", Path: k.path, Token: admin, Body: "code=AB", ContentType: "application/x-www-form-urlencoded"},
						Status: 415, Code: "unsupported_media_type"},
					// Existence comes before validation.
					testkit.Scenario{Name: "PUT invalid on unknown id", Request: testkit.Request{Method: "PUT", Path: k.path + "/0190a5c4-0000-7000-8000-000000000000", Token: admin, Body: with(k.body("X1"), "name", "")},
						Status: 404, Code: "not_found"})
				app.Run(t, scenarios)

				if after := count(t, app, admin, k.path); after != before {
					t.Errorf("%d records after refused creates, want %d", after, before)
				}
				if got := get(t, app, admin, one); got["version"] != 1.0 || got["name"] != existing["name"] || got["updatedAt"] != existing["updatedAt"] {
					t.Errorf("refused updates changed the record: %v, was %v", got, existing)
				}
			})
		}

		t.Run("normalisation", func(t *testing.T) {
			s := create(t, app, admin, "/api/suppliers", with(kinds[0].body(" ncc_x-01 "), "taxCode", " 0101234567001 ",
				"email", " sales@example.vn ", "address", "   ", "isActive", false))
			if s["code"] != "NCC_X-01" || s["taxCode"] != "0101234567-001" || s["email"] != "sales@example.vn" || s["address"] != nil || s["isActive"] != false {
				t.Errorf("normalised supplier %v", s)
			}
			p := create(t, app, admin, "/api/projects", map[string]any{"code": "da-x1", "name": "Dự án", "managerUserId": managerID,
				"startDate": "2026-11-21", "endDate": "2026-11-21"})
			if p["code"] != "DA-X1" || p["status"] != "Planning" || p["managerUserId"] != managerID || p["startDate"] != "2026-11-21" || p["endDate"] != "2026-11-21" || p["client"] != nil {
				t.Errorf("normalised project %v", p)
			}
			dep := create(t, app, admin, "/api/departments", map[string]any{"code": "qa", "name": "Phòng QA", "managerUserId": managerID})
			if dep["code"] != "QA" || dep["managerUserId"] != managerID {
				t.Errorf("department %v", dep)
			}
			// A full update clears what it omits.
			r := do(t, app, "PUT", "/api/projects/"+p["id"].(string), admin, map[string]any{"code": "DA-X1", "name": "Dự án"})
			var upd record
			r.JSON(t, &upd)
			if r.Status != 200 || upd["managerUserId"] != nil || upd["startDate"] != nil || upd["status"] != "Planning" {
				t.Errorf("full update: %d %v", r.Status, upd)
			}
		})
	})
}

func TestListParameters(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		get := func(path string) testkit.Request { return testkit.Request{Method: "GET", Path: path, Token: admin} }
		var scenarios []testkit.Scenario
		for _, k := range kinds {
			scenarios = append(scenarios,
				testkit.Scenario{Name: k.name + " unknown sort", Request: get(k.path + "?sort=supplierId"), Status: 400, Code: "validation_failed", Fields: []string{"Sort"}},
				testkit.Scenario{Name: k.name + " sort by a hidden column", Request: get(k.path + "?sort=deletedAt"), Status: 400, Fields: []string{"Sort"}},
				testkit.Scenario{Name: k.name + " pageSize 0", Request: get(k.path + "?pageSize=0"), Status: 400, Fields: []string{"PageSize"}},
				testkit.Scenario{Name: k.name + " pageSize 101", Request: get(k.path + "?pageSize=101"), Status: 400, Fields: []string{"PageSize"}},
				testkit.Scenario{Name: k.name + " page 0", Request: get(k.path + "?page=0"), Status: 400, Fields: []string{"Page"}},
				testkit.Scenario{Name: k.name + " isActive maybe", Request: get(k.path + "?isActive=maybe"), Status: 400, Fields: []string{"IsActive"}},
				testkit.Scenario{Name: k.name + " pageSize 100", Request: get(k.path + "?pageSize=100&sort=-createdAt,name"), Status: 200},
			)
		}
		scenarios = append(scenarios,
			testkit.Scenario{Name: "supplierType Foo", Request: get("/api/suppliers?supplierType=Foo"), Status: 400, Fields: []string{"SupplierType"}},
			testkit.Scenario{Name: "project status Foo", Request: get("/api/projects?status=Foo"), Status: 400, Fields: []string{"Status"}},
			testkit.Scenario{Name: "sort by startDate is projects only", Request: get("/api/suppliers?sort=startDate"), Status: 400, Fields: []string{"Sort"}},
			testkit.Scenario{Name: "every bad parameter at once", Request: get("/api/suppliers?sort=x&pageSize=0&supplierType=Foo&isActive=maybe"),
				Status: 400, Fields: []string{"Sort", "PageSize", "SupplierType", "IsActive"}},
		)
		app.Run(t, scenarios)
	})
}
