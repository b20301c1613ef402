package contracts_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

// TestCreate drafts a contract and checks every fact of the answer.
func TestCreate(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		dept := e.masterdata(t, "/api/departments", map[string]any{"code": "PKT", "name": "Phòng Kỹ thuật"})
		body := e.body(map[string]any{"title": "  Hợp đồng thầu phụ tầng hầm  ", "value": 1500000000.5, "departmentId": dept,
			"draftData":   map[string]any{"benA": "Công ty X", "soTien": 12.5, "items": []any{1, "two"}},
			"description": "Thi công tầng hầm", "startDate": "2026-04-01", "endDate": "2026-12-31"})
		r := e.do("POST", "/api/contracts", drafter.token, body)
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var c contract
		r.JSON(t, &c)
		checks := []struct {
			name string
			ok   bool
		}{
			{"location", r.Header.Get("Location") == "/api/contracts/"+c.ID},
			{"title trimmed", c.Title == "Hợp đồng thầu phụ tầng hầm"},
			{"phase", c.Phase == DangSoanThao},
			{"deadline seven days out", c.SLADeadline != nil && c.SLADeadline.Equal(t0.Add(168*time.Hour))},
			{"drafter", c.DrafterID == drafter.id && c.DrafterName == drafter.name},
			{"supplier", c.SupplierID == e.supplier && c.Supplier != nil && c.Supplier.ID == e.supplier && c.Supplier.Code == "NCC001" && c.Supplier.Name == "Công ty Vật tư A"},
			{"project", c.ProjectID != nil && *c.ProjectID == e.project && c.Project != nil && c.Project.Code == "DA001" && c.Project.Name == "Dự án Một"},
			{"department", c.DepartmentID != nil && *c.DepartmentID == dept},
			{"value exact", c.Value.String() == "1500000000.5"},
			{"currency default", c.Currency == "VND"},
			{"no code yet", c.MaHopDong == nil},
			{"version", c.Version == 1},
			{"no warning", !c.SLAWarningSent},
			{"dates", c.StartDate != nil && *c.StartDate == "2026-04-01" && c.EndDate != nil && *c.EndDate == "2026-12-31"},
			{"description", c.Description == "Thi công tầng hầm"},
			{"empty children", c.Approvals != nil && len(c.Approvals) == 0 && c.Comments != nil && len(c.Comments) == 0 && c.Attachments != nil && len(c.Attachments) == 0},
			{"allowed transitions", strings.Join(c.allowed(), ",") == DangDamPhan},
			{"created at", c.CreatedAt.Equal(t0)},
			{"pinned", c.WorkflowDefinitionID != ""},
		}
		for _, ch := range checks {
			if !ch.ok {
				t.Errorf("%s wrong: %s", ch.name, r.Body)
			}
		}
		if !bytes.Contains(r.Body, []byte(`"value":1500000000.5`)) {
			t.Errorf("value not written as an exact JSON number: %s", r.Body)
		}
		var draft map[string]any
		if err := json.Unmarshal(c.DraftData, &draft); err != nil || draft["benA"] != "Công ty X" || draft["soTien"] != 12.5 {
			t.Errorf("draftData %s", c.DraftData)
		}

		// What was stored reads back the same, in the detail and the list.
		got := e.get(t, drafter.token, c.ID)
		if got.Value.String() != "1500000000.5" || got.Title != c.Title || !got.SLADeadline.Equal(*c.SLADeadline) || string(got.DraftData) != string(c.DraftData) {
			t.Errorf("read back %+v", got)
		}
		l := e.list(t, drafter.token, "")
		if l.TotalCount != 1 || l.Items[0].ID != c.ID || l.Items[0].Value.String() != "1500000000.5" || l.Items[0].DrafterName != drafter.name {
			t.Errorf("list %+v", l)
		}

		t.Run("with the forms module off", func(t *testing.T) {
			// Templates cannot be checked, so the id is kept as given, and
			// there is nothing to render a draft with.
			tpl := "0190f5f2-7a3b-7c4d-8e5f-00000000000f"
			c := e.create(t, drafter.token, map[string]any{"templateId": tpl})
			if c.TemplateID == nil || *c.TemplateID != tpl {
				t.Fatalf("templateId %v", c.TemplateID)
			}
			testkit.WantProblem(t, e.do("POST", "/api/contracts/"+c.ID+"/draft-export", drafter.token, nil), 404, "not_found")
		})
		t.Run("currency and no draft data", func(t *testing.T) {
			c := e.create(t, drafter.token, map[string]any{"currency": "USD", "value": 0.01})
			if c.Currency != "USD" || c.Value.String() != "0.01" || string(c.DraftData) != "{}" {
				t.Fatalf("got %s %s %s", c.Currency, c.Value, c.DraftData)
			}
		})
	})
}

// TestCreateProjectRule: only the two framework types may omit the project.
func TestCreateProjectRule(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		for _, ct := range contractTypes {
			framework := strings.HasPrefix(ct, "Framework")
			t.Run(ct, func(t *testing.T) {
				// Left out, or an explicit null: the same.
				for _, project := range []any{nil, json.RawMessage("null")} {
					body := e.body(map[string]any{"contractType": ct})
					if project == nil {
						delete(body, "projectId")
					} else {
						body["projectId"] = project
					}
					r := e.do("POST", "/api/contracts", e.admin, body)
					if !framework {
						testkit.WantProblem(t, r, 400, "validation_failed", "ProjectId")
						continue
					}
					if r.Status != 201 {
						t.Fatalf("%d %s", r.Status, r.Body)
					}
					var c contract
					r.JSON(t, &c)
					if c.ProjectID != nil || c.Project != nil || c.ContractType != ct {
						t.Fatalf("got %s", r.Body)
					}
				}
				// With a project every type is fine.
				if c := e.create(t, e.admin, map[string]any{"contractType": ct}); c.Project == nil || c.Project.Code != "DA001" {
					t.Fatalf("project %+v", c.Project)
				}
			})
		}
	})
}

// TestCreateBadInput: each bad payload is a 400 naming the field (415 for a
// body that is not JSON) and writes nothing.
func TestCreateBadInput(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		deletedSupplier := e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC-DEL", "name": "Đã xoá", "supplierType": "Service"})
		if r := e.do("DELETE", "/api/suppliers/"+deletedSupplier, e.admin, nil); r.Status != 204 {
			t.Fatalf("delete supplier: %d %s", r.Status, r.Body)
		}
		const unknown = "0190f5f2-7a3b-7c4d-8e5f-000000000001"
		raw := func(s string) testkit.Request {
			return testkit.Request{Method: "POST", Path: "/api/contracts", Token: drafter.token, Body: s}
		}
		with := func(over map[string]any) testkit.Request {
			return testkit.Request{Method: "POST", Path: "/api/contracts", Token: drafter.token, Body: e.body(over)}
		}
		bad := func(name string, req testkit.Request, fields ...string) testkit.Scenario {
			return testkit.Scenario{Name: name, Request: req, Status: 400, Code: "validation_failed", Fields: fields}
		}
		e.app.Run(t, []testkit.Scenario{
			bad("malformed JSON", raw(`{"title": "x", `), "Body"),
			bad("empty body", raw(``), "Body"),
			bad("two values", raw(`{} {}`), "Body"),
			bad("array body", raw(`[]`), "Body"),
			{Name: "not JSON", Request: testkit.Request{Method: "POST", Path: "/api/contracts", Token: drafter.token, Body: "title=x", ContentType: "application/x-www-form-urlencoded"},
				Status: 415, Code: "unsupported_media_type"},
			bad("title a number", with(map[string]any{"title": 5}), "Title"),
			bad("title missing", with(map[string]any{"title": nil}), "Title"),
			bad("title blank", with(map[string]any{"title": "   "}), "Title"),
			bad("title too long", with(map[string]any{"title": strings.Repeat("ă", 301)}), "Title"),
			bad("value zero", with(map[string]any{"value": 0}), "Value"),
			bad("value missing", with(map[string]any{"value": nil}), "Value"),
			bad("value negative", with(map[string]any{"value": -1500000}), "Value"),
			bad("value three decimals", with(map[string]any{"value": json.RawMessage("1.234")}), "Value"),
			bad("value a string", with(map[string]any{"value": "1500000"}), "Value"),
			bad("value in exponent form", with(map[string]any{"value": json.RawMessage("1e6")}), "Value"),
			bad("value too large", with(map[string]any{"value": json.RawMessage("100000000000000000000")}), "Value"),
			bad("contract type unknown", with(map[string]any{"contractType": "Lease"}), "ContractType"),
			bad("contract type missing", with(map[string]any{"contractType": nil}), "ContractType"),
			bad("contract type wrong case", with(map[string]any{"contractType": "subcontract"}), "ContractType"),
			bad("draft data a string", with(map[string]any{"draftData": "{\"a\":1}"}), "DraftData"),
			bad("draft data an array", with(map[string]any{"draftData": []any{1, 2}}), "DraftData"),
			bad("draft data a number", with(map[string]any{"draftData": 42}), "DraftData"),
			bad("bypass flag a string", with(map[string]any{"bypassProcurementAndCCM": "yes"}), "BypassProcurementAndCCM"),
			bad("supplier missing", with(map[string]any{"supplierId": nil}), "SupplierId"),
			bad("supplier not a UUID", with(map[string]any{"supplierId": "NCC001"}), "SupplierId"),
			bad("supplier a number", with(map[string]any{"supplierId": 7}), "SupplierId"),
			bad("supplier unknown", with(map[string]any{"supplierId": unknown}), "SupplierId"),
			bad("supplier deleted", with(map[string]any{"supplierId": deletedSupplier}), "SupplierId"),
			bad("project not a UUID", with(map[string]any{"projectId": "DA001"}), "ProjectId"),
			bad("project unknown", with(map[string]any{"projectId": unknown}), "ProjectId"),
			bad("department unknown", with(map[string]any{"departmentId": unknown}), "DepartmentId"),
			bad("department not a UUID", with(map[string]any{"departmentId": "PKT"}), "DepartmentId"),
			bad("currency lower case", with(map[string]any{"currency": "usd"}), "Currency"),
			bad("currency too long", with(map[string]any{"currency": "VNDX"}), "Currency"),
			bad("description too long", with(map[string]any{"description": strings.Repeat("x", 4001)}), "Description"),
			bad("start date not a date", with(map[string]any{"startDate": "2026-13-01"}), "StartDate"),
			bad("start date in another format", with(map[string]any{"startDate": "01/04/2026"}), "StartDate"),
			bad("end date impossible", with(map[string]any{"endDate": "2026-02-30"}), "EndDate"),
			bad("end date a timestamp", with(map[string]any{"endDate": "2026-12-31T00:00:00Z"}), "EndDate"),
			bad("end date before start date", with(map[string]any{"startDate": "2026-05-01", "endDate": "2026-04-30"}), "EndDate"),
		})
		if n := e.count(t, "SELECT COUNT(*) FROM contracts"); n != 0 {
			t.Fatalf("%d contracts written by refused requests", n)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM contract_code_sequences"); n != 0 {
			t.Fatalf("%d code counters written", n)
		}
		// The same dates in order, and on the same day, are fine.
		e.create(t, drafter.token, map[string]any{"startDate": "2026-05-01", "endDate": "2026-05-01"})
	})
}

// TestUpdateDraft: drafts are edited only in DangSoanThao, only by their
// drafter or Admin, with optimistic concurrency; server-owned fields in the
// body are ignored.
func TestUpdateDraft(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		other := e.user(t, "Drafter")
		c := e.create(t, drafter.token, map[string]any{"draftData": map[string]any{"a": 1}})
		put := func(token string, over map[string]any) *testkit.Response {
			b := e.body(map[string]any{"title": c.Title})
			for k, v := range over {
				if v == nil {
					delete(b, k)
				} else {
					b[k] = v
				}
			}
			return e.do("PUT", "/api/contracts/"+c.ID, token, b)
		}

		r := put(drafter.token, map[string]any{"title": "Tên mới", "value": 2000000.25, "draftData": map[string]any{"b": "hai"},
			"version": 1, "bypassProcurementAndCCM": true})
		if r.Status != 200 {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		var u contract
		r.JSON(t, &u)
		if u.Title != "Tên mới" || u.Value.String() != "2000000.25" || string(u.DraftData) != `{"b":"hai"}` || u.Version != 2 ||
			!u.BypassProcurementAndCCM || u.Phase != DangSoanThao {
			t.Fatalf("updated %s", r.Body)
		}

		e.app.Run(t, []testkit.Scenario{
			{Name: "stale version", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"version": 1})}, Status: 409, Code: "stale_version"},
			{Name: "another drafter who sees it", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: other.token,
				Body: e.body(nil)}, Status: 403, Code: "forbidden"},
			{Name: "title blank", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"title": " "})}, Status: 400, Code: "validation_failed", Fields: []string{"Title"}},
			{Name: "value zero", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"value": 0})}, Status: 400, Code: "validation_failed", Fields: []string{"Value"}},
			{Name: "value three decimals", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"value": json.RawMessage("2.001")})}, Status: 400, Code: "validation_failed", Fields: []string{"Value"}},
			{Name: "value a string", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"value": "5"})}, Status: 400, Code: "validation_failed", Fields: []string{"Value"}},
			{Name: "version a string", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"version": "2"})}, Status: 400, Code: "validation_failed", Fields: []string{"Version"}},
			{Name: "malformed JSON", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: `{"title":`}, Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
			{Name: "contract type changed", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"contractType": "Supply"})}, Status: 400, Code: "validation_failed", Fields: []string{"ContractType"}},
			{Name: "draft data not an object", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"draftData": []any{}})}, Status: 400, Code: "validation_failed", Fields: []string{"DraftData"}},
			{Name: "unknown supplier", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"supplierId": "0190f5f2-7a3b-7c4d-8e5f-000000000001"})}, Status: 400, Code: "validation_failed", Fields: []string{"SupplierId"}},
			{Name: "project dropped", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token,
				Body: e.body(map[string]any{"projectId": nil})}, Status: 400, Code: "validation_failed", Fields: []string{"ProjectId"}},
			{Name: "unknown contract", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/0190f5f2-7a3b-7c4d-8e5f-000000000001", Token: drafter.token,
				Body: e.body(nil)}, Status: 404, Code: "not_found"},
			{Name: "malformed id", Request: testkit.Request{Method: "PUT", Path: "/api/contracts/abc", Token: drafter.token,
				Body: e.body(nil)}, Status: 404, Code: "not_found"},
		})
		if got := e.get(t, drafter.token, c.ID); got.Version != 2 || got.Title != "Tên mới" {
			t.Fatalf("a refused update changed the contract: %+v", got)
		}

		t.Run("server-owned fields are ignored", func(t *testing.T) {
			r := put(drafter.token, map[string]any{"phase": DaPhatHanh, "maHopDong": "DA001-HDTP-999", "drafterId": other.id,
				"slaDeadline": "2030-01-01T00:00:00Z", "id": "0190f5f2-7a3b-7c4d-8e5f-000000000001", "workflowDefinitionId": "x",
				"slaWarningSent": true, "createdAt": "2020-01-01T00:00:00Z"})
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			got := e.get(t, drafter.token, c.ID)
			if got.ID != c.ID || got.Phase != DangSoanThao || got.MaHopDong != nil || got.DrafterID != drafter.id || got.SLAWarningSent ||
				!got.SLADeadline.Equal(t0.Add(168*time.Hour)) || got.WorkflowDefinitionID != c.WorkflowDefinitionID || !got.CreatedAt.Equal(t0) {
				t.Fatalf("server-owned fields taken from the body: %+v", got)
			}
		})
		t.Run("admin may edit", func(t *testing.T) {
			if r := put(e.admin, map[string]any{"title": "Sửa bởi quản trị"}); r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		})
		t.Run("not editable after DangSoanThao", func(t *testing.T) {
			e.mustMove(t, drafter.token, c.ID, DangDamPhan, "")
			testkit.WantProblem(t, put(drafter.token, nil), 409, "not_editable")
			testkit.WantProblem(t, put(e.admin, nil), 409, "not_editable")
			// Returned to drafting, it is editable again.
			e.mustMove(t, drafter.token, c.ID, DangSoanThao, "Sửa lại giá")
			if r := put(drafter.token, map[string]any{"title": "Lần hai"}); r.Status != 200 {
				t.Fatalf("after the return: %d %s", r.Status, r.Body)
			}
			e.drive(t, c.ID, DaPhatHanh)
			testkit.WantProblem(t, put(e.admin, nil), 409, "not_editable")
		})
	})
}

// TestDelete: a soft delete, allowed up to DangInKy and refused from
// DangKiemTraCCM on.
func TestDelete(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		for _, phase := range []string{DangSoanThao, DangDamPhan, DangGopY, DangInKy} {
			t.Run("allowed in "+phase, func(t *testing.T) {
				c := e.create(t, drafter.token, nil)
				e.drive(t, c.ID, phase)
				token := e.admin
				if phase == DangSoanThao || phase == DangInKy {
					token = drafter.token
				}
				if r := e.do("DELETE", "/api/contracts/"+c.ID, token, nil); r.Status != 204 || len(r.Body) != 0 {
					t.Fatalf("delete: %d %s", r.Status, r.Body)
				}
				testkit.WantProblem(t, e.do("GET", "/api/contracts/"+c.ID, e.admin, nil), 404, "not_found")
				testkit.WantProblem(t, e.do("DELETE", "/api/contracts/"+c.ID, e.admin, nil), 404, "not_found")
				testkit.WantProblem(t, e.move(e.admin, c.ID, DangDamPhan, ""), 404, "not_found")
				testkit.WantProblem(t, e.do("POST", "/api/contracts/"+c.ID+"/comments", e.admin, map[string]any{"content": "x"}), 404, "not_found")
				for _, id := range e.list(t, e.admin, "?pageSize=100").ids() {
					if id == c.ID {
						t.Fatal("deleted contract still listed")
					}
				}
				for _, id := range e.inbox(t, e.admin, "?pageSize=100").ids() {
					if id == c.ID {
						t.Fatal("deleted contract still in the inbox")
					}
				}
				// Soft: the row is kept, marked with who deleted it.
				if n := e.count(t, "SELECT COUNT(*) FROM contracts WHERE id = ? AND deleted_at IS NOT NULL AND deleted_by IS NOT NULL", c.ID); n != 1 {
					t.Fatal("row not kept as deleted")
				}
			})
		}
		for _, phase := range []string{DangKiemTraCCM, DangTrinhKy, DangDongDau, DaPhatHanh, TuChoi} {
			t.Run("refused in "+phase, func(t *testing.T) {
				c := e.create(t, drafter.token, nil)
				e.drive(t, c.ID, phase)
				testkit.WantProblem(t, e.do("DELETE", "/api/contracts/"+c.ID, e.admin, nil), 409, "not_deletable")
				if got := e.get(t, e.admin, c.ID); got.Phase != phase {
					t.Fatalf("phase %s", got.Phase)
				}
			})
		}
		testkit.WantProblem(t, e.do("DELETE", "/api/contracts/0190f5f2-7a3b-7c4d-8e5f-000000000001", e.admin, nil), 404, "not_found")
	})
}

// Another Drafter sees a draft in DangSoanThao (its inbox role) but may not
// delete it: only its drafter or Admin may.
func TestDeleteByDrafterOrAdminOnly(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		owner, other := e.user(t, "Drafter"), e.user(t, "Drafter")
		c := e.create(t, owner.token, nil)
		testkit.WantProblem(t, e.do("DELETE", "/api/contracts/"+c.ID, other.token, nil), 403, "forbidden")
		if r := e.do("DELETE", "/api/contracts/"+c.ID, owner.token, nil); r.Status != 204 {
			t.Fatalf("drafter delete: %d %s", r.Status, r.Body)
		}
		c2 := e.create(t, owner.token, nil)
		if r := e.do("DELETE", "/api/contracts/"+c2.ID, e.admin, nil); r.Status != 204 {
			t.Fatalf("admin delete: %d %s", r.Status, r.Body)
		}
	})
}

// Search ignores case and Vietnamese marks on both databases: SQLite's own
// LOWER knows only ASCII, so titles are matched through folded search text.
func TestSearchFoldsVietnamese(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		c := e.create(t, e.admin, map[string]any{"title": "HỢP ĐỒNG Thầu Phụ Cọc Khoan Nhồi"})
		e.create(t, e.admin, map[string]any{"title": "Mua xi măng"})
		for _, q := range []string{"hợp đồng", "hop dong", "THẦU phụ", "coc khoan", "nhồi hợp"} {
			if ids := e.list(t, e.admin, "?search="+url.QueryEscape(q)).ids(); len(ids) != 1 || ids[0] != c.ID {
				t.Errorf("search %q: %v, want only %s", q, ids, c.ID)
			}
		}
		if ids := e.list(t, e.admin, "?search="+url.QueryEscape("hợp xi")).ids(); len(ids) != 0 {
			t.Errorf("every word must match: %v", ids)
		}
	})
}
