package masterdata_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

// The life of a record, for each resource: create, get, list, update, delete.
func TestCRUD(t *testing.T) {
	eachKind(t, func(t *testing.T, app *testkit.App, admin string, k kind) {
		code := newCode("c-" + k.name[:3] + "-")
		body := k.body(strings.ToLower(code))
		body["name"] = "  " + body["name"].(string) + "  "
		body["id"] = "00000000-0000-7000-8000-000000000000" // server-owned: ignored
		body["createdBy"] = "someone"
		r := do(t, app, "POST", k.path, admin, body)
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var created record
		r.JSON(t, &created)
		id := created["id"].(string)
		if loc := r.Header.Get("Location"); loc != k.path+"/"+id {
			t.Errorf("Location %q, want %q", loc, k.path+"/"+id)
		}
		if created["code"] != strings.ToUpper(code) {
			t.Errorf("code %v, want it upper-cased: %s", created["code"], strings.ToUpper(code))
		}
		if name := created["name"].(string); name != strings.TrimSpace(name) {
			t.Errorf("name %q is not trimmed", name)
		}
		if created["isActive"] != true || created["version"] != 1.0 || id == "00000000-0000-7000-8000-000000000000" {
			t.Errorf("created %v: want isActive true, version 1 and a new id", created)
		}
		for _, hidden := range []string{"searchText", "deletedAt", "deletedBy", "SearchText"} {
			if _, ok := created[hidden]; ok {
				t.Errorf("the response shows %s", hidden)
			}
		}

		got := get(t, app, admin, k.path+"/"+id)
		if got["code"] != created["code"] || got["createdAt"] != created["createdAt"] || got["updatedAt"] != created["updatedAt"] {
			t.Errorf("GET %v differs from the POST answer %v", got, created)
		}
		if p := list(t, app, admin, k.path+"?search="+code); len(p.Items) != 1 || p.Items[0]["id"] != id {
			t.Errorf("list by code: %+v", p)
		}

		upd := k.body(code)
		upd["name"] = "Renamed " + code
		upd["isActive"] = false
		upd["version"] = 1
		upd["createdAt"] = "2000-01-01T00:00:00Z" // server-owned: ignored
		app.Clock.Advance(time.Minute)
		r = do(t, app, "PUT", k.path+"/"+id, admin, upd)
		if r.Status != 200 {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		var updated record
		r.JSON(t, &updated)
		if updated["name"] != "Renamed "+code || updated["isActive"] != false || updated["version"] != 2.0 {
			t.Errorf("updated %v", updated)
		}
		if updated["createdAt"] != created["createdAt"] || updated["updatedAt"] == created["updatedAt"] {
			t.Errorf("createdAt must stay and updatedAt move: %v", updated)
		}
		if got := get(t, app, admin, k.path+"/"+id); got["name"] != "Renamed "+code || got["version"] != 2.0 || got["updatedAt"] != updated["updatedAt"] {
			t.Errorf("GET after PUT %v, PUT answered %v", got, updated)
		}

		app.Run(t, []testkit.Scenario{
			{Name: "delete", Request: testkit.Request{Method: "DELETE", Path: k.path + "/" + id, Token: admin}, Status: 204},
			{Name: "get after delete", Request: testkit.Request{Method: "GET", Path: k.path + "/" + id, Token: admin}, Status: 404, Code: "not_found"},
			{Name: "update after delete", Request: testkit.Request{Method: "PUT", Path: k.path + "/" + id, Token: admin, Body: k.body(code)}, Status: 404, Code: "not_found"},
			{Name: "delete twice", Request: testkit.Request{Method: "DELETE", Path: k.path + "/" + id, Token: admin}, Status: 404, Code: "not_found"},
			{Name: "unknown id", Request: testkit.Request{Method: "GET", Path: k.path + "/0190a5c4-0000-7000-8000-000000000000", Token: admin}, Status: 404, Code: "not_found"},
			{Name: "malformed id", Request: testkit.Request{Method: "GET", Path: k.path + "/not-a-uuid", Token: admin}, Status: 404, Code: "not_found"},
			{Name: "delete unknown", Request: testkit.Request{Method: "DELETE", Path: k.path + "/0190a5c4-0000-7000-8000-000000000000", Token: admin}, Status: 404, Code: "not_found"},
		})
		if p := list(t, app, admin, k.path+"?search="+code); p.TotalCount != 0 {
			t.Errorf("a deleted record is listed: %+v", p)
		}
	})
}

// Codes are unique among live records; a deleted record's code is free again.
func TestDuplicateCodeAndReuse(t *testing.T) {
	eachKind(t, func(t *testing.T, app *testkit.App, admin string, k kind) {
		code := newCode("DUP-")
		first := create(t, app, admin, k.path, k.body(code))
		other := create(t, app, admin, k.path, k.body(code+"X"))
		before := count(t, app, admin, k.path)
		app.Run(t, []testkit.Scenario{
			{Name: "same code", Request: testkit.Request{Method: "POST", Path: k.path, Token: admin, Body: k.body(code)}, Status: 409, Code: "duplicate_code"},
			{Name: "same code in lower case with spaces", Request: testkit.Request{Method: "POST", Path: k.path, Token: admin, Body: k.body("  " + strings.ToLower(code) + " ")}, Status: 409, Code: "duplicate_code"},
			{Name: "rename onto a taken code", Request: testkit.Request{Method: "PUT", Path: k.path + "/" + other["id"].(string), Token: admin, Body: k.body(code)}, Status: 409, Code: "duplicate_code"},
		})
		if after := count(t, app, admin, k.path); after != before {
			t.Errorf("count %d after refused writes, want %d", after, before)
		}
		if got := get(t, app, admin, k.path+"/"+other["id"].(string)); got["code"] != code+"X" || got["version"] != 1.0 {
			t.Errorf("a refused rename changed the record: %v", got)
		}
		do(t, app, "DELETE", k.path+"/"+first["id"].(string), admin, nil)
		again := create(t, app, admin, k.path, k.body(code))
		if again["id"] == first["id"] || again["code"] != code {
			t.Errorf("reuse after delete: %v", again)
		}
		// Keeping one's own code on update is no conflict.
		body := k.body(code)
		body["version"] = 1
		if r := do(t, app, "PUT", k.path+"/"+again["id"].(string), admin, body); r.Status != 200 {
			t.Errorf("update keeping the code: %d %s", r.Status, r.Body)
		}
	})
}

func TestStaleVersion(t *testing.T) {
	eachKind(t, func(t *testing.T, app *testkit.App, admin string, k kind) {
		code := newCode("VER-")
		rec := create(t, app, admin, k.path, k.body(code))
		path := k.path + "/" + rec["id"].(string)
		v1 := k.body(code)
		v1["version"] = 1
		v1["name"] = "First editor"
		if r := do(t, app, "PUT", path, admin, v1); r.Status != 200 {
			t.Fatalf("first update: %d %s", r.Status, r.Body)
		}
		v1["name"] = "Second editor, who read version 1"
		app.Run(t, []testkit.Scenario{
			{Name: "stale", Request: testkit.Request{Method: "PUT", Path: path, Token: admin, Body: v1}, Status: 409, Code: "stale_version"},
		})
		if got := get(t, app, admin, path); got["name"] != "First editor" || got["version"] != 2.0 {
			t.Errorf("a stale update changed the record: %v", got)
		}
		// Without a version the update applies to what is there.
		delete(v1, "version")
		if r := do(t, app, "PUT", path, admin, v1); r.Status != 200 {
			t.Errorf("update without version: %d %s", r.Status, r.Body)
		}
	})
}

// createdBy/updatedBy name the caller, the times come from the clock, and a
// delete records who deleted.
func TestAuditFields(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		t0 := time.Date(2026, 11, 21, 8, 0, 0, 123456789, time.UTC) // stored to the microsecond
		app, admin := start(t, d, testkit.WithClock(clock.NewManual(t0)))
		adminID := userID(t, app, admin)
		buyerID, _, buyer := identitytest.NewUser(t, app, identity.RoleProcurement)
		rec := create(t, app, buyer, "/api/suppliers", kinds[0].body(newCode("AUD-")))
		if rec["createdBy"] != buyerID || rec["updatedBy"] != buyerID || rec["createdAt"] != "2026-11-21T08:00:00.123456Z" || rec["updatedAt"] != rec["createdAt"] {
			t.Errorf("created %v: want createdBy = updatedBy = %s at %s", rec, buyerID, t0.Format(time.RFC3339Nano))
		}
		app.Clock.Advance(time.Minute)
		path := "/api/suppliers/" + rec["id"].(string)
		body := kinds[0].body(rec["code"].(string))
		if r := do(t, app, "PUT", path, admin, body); r.Status != 200 {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		got := get(t, app, admin, path)
		if got["createdBy"] != buyerID || got["updatedBy"] != adminID || got["createdAt"] != "2026-11-21T08:00:00.123456Z" || got["updatedAt"] != "2026-11-21T08:01:00.123456Z" {
			t.Errorf("after update %v: want createdBy %s, updatedBy %s, updatedAt a minute later", got, buyerID, adminID)
		}

		app.Clock.Advance(time.Minute)
		if r := do(t, app, "DELETE", path, admin, nil); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		var row struct {
			DeletedAt time.Time
			DeletedBy string
		}
		err := app.Kernel.App().DB.Conn(t.Context()).Raw("SELECT deleted_at, deleted_by FROM suppliers WHERE id = ?", rec["id"]).Scan(&row).Error
		if err != nil {
			t.Fatal(err)
		}
		if row.DeletedBy != adminID || !row.DeletedAt.Equal(t0.Add(2*time.Minute).Truncate(time.Microsecond)) {
			t.Errorf("deleted_at %v, deleted_by %q: want %v by %s", row.DeletedAt, row.DeletedBy, t0.Add(2*time.Minute), adminID)
		}
	})
}
