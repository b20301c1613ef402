package budget_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestBudgetLifecycle walks one budget through every endpoint's happy path:
// create, lines, approve, adjust, post commitments, edit, close.
func TestBudgetLifecycle(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		r := e.do("POST", "/api/budgets", e.admin, map[string]any{"code": " ns-2026-a ", "name": "  Ngân sách Dự án Một ",
			"projectId": e.project, "fiscalYear": 2026, "onExceed": "Warn", "description": "Kế hoạch năm"})
		if r.Status != 201 || r.Header.Get("Location") == "" {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var b budget
		r.JSON(t, &b)
		if b.Code != "NS-2026-A" || b.Name != "Ngân sách Dự án Một" || b.Status != "Draft" || b.Currency != "VND" || b.Version != 1 ||
			b.Lines == nil || len(b.Lines) != 0 {
			t.Fatalf("created %+v", b)
		}

		l1 := e.addLine(t, b.ID, "vt", 1000000)
		l2 := e.addLine(t, b.ID, "NC", 250000.5)
		if l1.Code != "VT" || string(l1.PlannedAmount) != "1000000" || string(l1.Remaining) != "1000000" {
			t.Fatalf("line %+v", l1)
		}
		r = e.do("PUT", "/api/budgets/"+b.ID+"/lines/"+l2.ID, e.admin, map[string]any{"code": "NC", "name": "Nhân công", "plannedAmount": 300000})
		if r.Status != 200 {
			t.Fatalf("update line: %d %s", r.Status, r.Body)
		}
		wantAmounts(t, "draft totals", budgetFigures(e.get(t, b.ID)), "1300000", "0", "0", "0", "1300000")

		b = e.approve(t, b.ID)
		if b.Status != "Approved" {
			t.Fatalf("approved: %s", b.Status)
		}

		r = e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l1.ID+"/adjustments", e.admin, map[string]any{"delta": -200000, "reason": "Giảm khối lượng"})
		if r.Status != 201 {
			t.Fatalf("adjust: %d %s", r.Status, r.Body)
		}
		var adj struct {
			Delta json.Number
			Line  line
		}
		r.JSON(t, &adj)
		wantAmounts(t, "adjusted line", lineFigures(adj.Line), "800000", "0", "0", "0", "800000")
		if string(adj.Line.OriginalAmount) != "1000000" || string(adj.Line.AdjustmentsTotal) != "-200000" || len(adj.Line.Adjustments) != 1 {
			t.Errorf("adjusted line %+v", adj.Line)
		}

		// Bookkeeping: recorded even beyond remaining.
		for _, c := range []map[string]any{
			{"amount": 500000, "kind": "Committed", "note": "Đơn hàng PO-1"},
			{"amount": 100000, "kind": "Actual", "note": "Hoá đơn 12"},
			{"amount": 400000.25, "kind": "Reserved", "note": "Dự phòng"},
		} {
			r = e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l1.ID+"/commitments", e.admin, c)
			if r.Status != 201 {
				t.Fatalf("commitment %v: %d %s", c, r.Status, r.Body)
			}
		}
		b = e.get(t, b.ID)
		wantAmounts(t, "line after commitments", lineFigures(b.line("VT")), "800000", "400000.25", "500000", "100000", "-200000.25")
		wantAmounts(t, "budget after commitments", budgetFigures(b), "1100000", "400000.25", "500000", "100000", "99999.75")
		if n := len(b.line("VT").Commitments); n != 3 {
			t.Errorf("%d open entries, want 3", n)
		}

		// Released by hand: exactly what entries without a contract hold.
		r = e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l1.ID+"/commitments", e.admin, map[string]any{"amount": 1, "kind": "Released"})
		testkit.WantProblem(t, r, 400, "validation_failed", "Amount")
		r = e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l1.ID+"/commitments", e.admin, map[string]any{"amount": 900000.25, "kind": "Released", "note": "Huỷ"})
		if r.Status != 201 {
			t.Fatalf("release: %d %s", r.Status, r.Body)
		}
		wantAmounts(t, "line after release", lineFigures(e.get(t, b.ID).line("VT")), "800000", "0", "0", "100000", "700000")

		// Editing an Approved budget: name and onExceed change; closing it.
		r = e.do("PUT", "/api/budgets/"+b.ID, e.admin, map[string]any{"code": "NS-2026-A", "name": "Ngân sách đổi tên", "projectId": e.project,
			"fiscalYear": 2026, "onExceed": "Block", "version": b.Version})
		if r.Status != 200 {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &b)
		if b.Name != "Ngân sách đổi tên" || b.OnExceed != "Block" || b.Version != 3 {
			t.Errorf("updated %+v", b)
		}
		r = e.do("PUT", "/api/budgets/"+b.ID, e.admin, map[string]any{"code": "NS-2026-A", "name": b.Name, "projectId": e.project,
			"fiscalYear": 2026, "status": "Closed"})
		if r.Status != 200 {
			t.Fatalf("close: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &b)
		if b.Status != "Closed" {
			t.Errorf("closed: %s", b.Status)
		}
		// A Closed budget still records actuals, never new reservations.
		r = e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l1.ID+"/commitments", e.admin, map[string]any{"amount": 5, "kind": "Actual"})
		if r.Status != 201 {
			t.Errorf("actual on a closed budget: %d %s", r.Status, r.Body)
		}
		before := e.snapshot(t, b.ID)
		testkit.WantProblem(t, e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l1.ID+"/commitments", e.admin, map[string]any{"amount": 5, "kind": "Reserved"}), 409, "not_editable")
		testkit.WantProblem(t, e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l1.ID+"/adjustments", e.admin, map[string]any{"delta": 5, "reason": "x"}), 409, "not_editable")
		testkit.WantProblem(t, e.do("PUT", "/api/budgets/"+b.ID, e.admin, map[string]any{"code": "NS-2026-A", "name": "X", "fiscalYear": 2026}), 409, "not_editable")
		if e.snapshot(t, b.ID) != before {
			t.Error("a refused change to a Closed budget wrote something")
		}
		e.checkTotals(t)
	})
}

func TestListBudgets(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		a := e.newBudget(t, map[string]any{"code": "NS-A", "name": "Ngân sách Xây dựng", "fiscalYear": 2025})
		b := e.newBudget(t, map[string]any{"code": "NS-B", "name": "Thiết bị", "projectId": e.project2})
		e.addLine(t, b.ID, "L1", 10)
		e.approve(t, b.ID)
		c := e.newBudget(t, map[string]any{"code": "NS-C", "name": "Chung", "projectId": nil})
		ids := func(q string) []string {
			t.Helper()
			r := e.do("GET", "/api/budgets"+q, e.admin, nil)
			if r.Status != 200 {
				t.Fatalf("list %s: %d %s", q, r.Status, r.Body)
			}
			var p struct {
				Items      []budget
				TotalCount int
			}
			r.JSON(t, &p)
			out := []string{}
			for _, it := range p.Items {
				out = append(out, it.ID)
			}
			if p.TotalCount != len(out) {
				t.Errorf("totalCount %d for %d items", p.TotalCount, len(out))
			}
			return out
		}
		cases := []struct {
			q    string
			want []string
		}{
			{"", []string{b.ID, c.ID, a.ID}}, // -fiscalYear, code
			{"?sort=code", []string{a.ID, b.ID, c.ID}},
			{"?projectId=" + e.project2, []string{b.ID}},
			{"?fiscalYear=2025", []string{a.ID}},
			{"?status=Approved", []string{b.ID}},
			{"?search=xay%20dung", []string{a.ID}},
			{"?search=ns-c", []string{c.ID}},
		}
		for _, tc := range cases {
			if got := ids(tc.q); !slices.Equal(got, tc.want) {
				t.Errorf("%q: %v, want %v", tc.q, got, tc.want)
			}
		}
		for _, q := range []string{"?status=Open", "?fiscalYear=abc", "?projectId=x", "?sort=budget", "?pageSize=101"} {
			testkit.WantProblem(t, e.do("GET", "/api/budgets"+q, e.admin, nil), 400, "validation_failed")
		}
	})
}

// TestBadInput sends every kind of invalid input and checks the problem and
// that nothing was written.
func TestBadInput(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		draft := e.newBudget(t, map[string]any{"code": "NS-DRAFT"})
		dl := e.addLine(t, draft.ID, "L1", 100)
		e.addLine(t, draft.ID, "L2", 100)
		appr, al := e.approvedLine(t, "Block", 1000)
		e.do("POST", "/api/budgets/"+appr.ID+"/lines/"+al.ID+"/commitments", e.admin, map[string]any{"amount": 10, "kind": "Actual"})
		budgets := func() int64 { return e.count(t, "SELECT COUNT(*) FROM budgets") }
		nBudgets := budgets()

		create := func(over map[string]any) map[string]any {
			b := map[string]any{"code": "NS-NEW", "name": "Mới", "fiscalYear": 2026}
			for k, v := range over {
				if v == nil {
					delete(b, k)
				} else {
					b[k] = v
				}
			}
			return b
		}
		lines := "/api/budgets/" + draft.ID + "/lines"
		adjust := "/api/budgets/" + appr.ID + "/lines/" + al.ID + "/adjustments"
		commit := "/api/budgets/" + appr.ID + "/lines/" + al.ID + "/commitments"
		huge := "1234567890123456789" // 19 digits
		cases := []struct {
			name, method, path string
			body               any
			status             int
			code               string
			fields             []string
		}{
			{"budget without code, name and year", "POST", "/api/budgets", map[string]any{}, 400, "validation_failed", []string{"Code", "Name", "FiscalYear"}},
			{"bad code", "POST", "/api/budgets", create(map[string]any{"code": "N S"}), 400, "validation_failed", []string{"Code"}},
			{"unknown onExceed", "POST", "/api/budgets", create(map[string]any{"onExceed": "Ignore"}), 400, "validation_failed", []string{"OnExceed"}},
			{"unknown status", "POST", "/api/budgets", create(map[string]any{"status": "Open"}), 400, "validation_failed", []string{"Status"}},
			{"created Approved", "POST", "/api/budgets", create(map[string]any{"status": "Approved"}), 400, "validation_failed", []string{"Status"}},
			{"unknown project", "POST", "/api/budgets", create(map[string]any{"projectId": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}), 400, "validation_failed", []string{"ProjectId"}},
			{"year as text", "POST", "/api/budgets", create(map[string]any{"fiscalYear": "2026"}), 400, "validation_failed", []string{"FiscalYear"}},
			{"malformed JSON", "POST", "/api/budgets", `{"code": "NS-X",`, 400, "validation_failed", []string{"Body"}},
			{"duplicate budget code", "POST", "/api/budgets", create(map[string]any{"code": "ns-draft"}), 409, "duplicate_code", nil},
			{"line amount zero", "POST", lines, map[string]any{"code": "L3", "name": "x", "plannedAmount": 0}, 400, "validation_failed", []string{"PlannedAmount"}},
			{"line amount negative", "POST", lines, map[string]any{"code": "L3", "name": "x", "plannedAmount": -5}, 400, "validation_failed", []string{"PlannedAmount"}},
			{"line amount missing", "POST", lines, map[string]any{"code": "L3", "name": "x"}, 400, "validation_failed", []string{"PlannedAmount"}},
			{"line amount 19 digits", "POST", lines, `{"code":"L3","name":"x","plannedAmount":` + huge + `}`, 400, "validation_failed", []string{"PlannedAmount"}},
			{"line amount three decimals", "POST", lines, `{"code":"L3","name":"x","plannedAmount":1.005}`, 400, "validation_failed", []string{"PlannedAmount"}},
			{"duplicate line code", "POST", lines, map[string]any{"code": "l1", "name": "x", "plannedAmount": 5}, 409, "duplicate_code", nil},
			{"renaming a line onto another's code", "PUT", lines + "/" + dl.ID, map[string]any{"code": "L2", "name": "x"}, 409, "duplicate_code", nil},
			{"line on an Approved budget", "POST", "/api/budgets/" + appr.ID + "/lines", map[string]any{"code": "L9", "name": "x", "plannedAmount": 5}, 409, "not_editable", nil},
			{"planned amount of an Approved budget", "PUT", "/api/budgets/" + appr.ID + "/lines/" + al.ID, map[string]any{"code": "L1", "name": "x", "plannedAmount": 2000}, 409, "not_editable", nil},
			{"project of an Approved budget", "PUT", "/api/budgets/" + appr.ID, map[string]any{"code": appr.Code, "name": "x", "fiscalYear": 2026, "projectId": e.project2}, 409, "not_editable", nil},
			{"reopening as Draft", "PUT", "/api/budgets/" + appr.ID, map[string]any{"code": appr.Code, "name": "x", "fiscalYear": 2026, "projectId": e.project, "status": "Draft"}, 409, "invalid_transition", nil},
			{"closing a Draft", "PUT", "/api/budgets/" + draft.ID, map[string]any{"code": "NS-DRAFT", "name": "x", "fiscalYear": 2026, "status": "Closed"}, 409, "invalid_transition", nil},
			{"stale version", "PUT", "/api/budgets/" + draft.ID, map[string]any{"code": "NS-DRAFT", "name": "x", "fiscalYear": 2026, "version": 7}, 409, "stale_version", nil},
			{"stale line version", "PUT", lines + "/" + dl.ID, map[string]any{"code": "L1", "name": "x", "version": 9}, 409, "stale_version", nil},
			{"deleting an Approved budget", "DELETE", "/api/budgets/" + appr.ID, nil, 409, "not_deletable", nil},
			{"deleting a line with commitments", "DELETE", "/api/budgets/" + appr.ID + "/lines/" + al.ID, nil, 409, "not_deletable", nil},
			{"approving twice", "POST", "/api/budgets/" + appr.ID + "/approve", nil, 409, "invalid_transition", nil},
			{"adjustment making planned negative", "POST", adjust, map[string]any{"delta": -1000.01, "reason": "Cắt giảm"}, 400, "validation_failed", []string{"Delta"}},
			{"adjustment of zero", "POST", adjust, map[string]any{"delta": 0, "reason": "x"}, 400, "validation_failed", []string{"Delta"}},
			{"adjustment without reason", "POST", adjust, map[string]any{"delta": 5, "reason": "  "}, 400, "validation_failed", []string{"Reason"}},
			{"adjustment 19 digits", "POST", adjust, `{"delta":` + huge + `,"reason":"x"}`, 400, "validation_failed", []string{"Delta"}},
			{"adjustment of a Draft budget", "POST", lines + "/" + dl.ID + "/adjustments", map[string]any{"delta": 5, "reason": "x"}, 409, "not_editable", nil},
			{"commitment of zero", "POST", commit, map[string]any{"amount": 0, "kind": "Actual"}, 400, "validation_failed", []string{"Amount"}},
			{"negative commitment", "POST", commit, map[string]any{"amount": -3, "kind": "Actual"}, 400, "validation_failed", []string{"Amount"}},
			{"unknown commitment kind", "POST", commit, map[string]any{"amount": 3, "kind": "Spent"}, 400, "validation_failed", []string{"Kind"}},
			{"commitment 19 digits", "POST", commit, `{"amount":` + huge + `,"kind":"Actual"}`, 400, "validation_failed", []string{"Amount"}},
			{"commitment for a malformed contract", "POST", commit, map[string]any{"amount": 3, "kind": "Actual", "contractId": "abc"}, 400, "validation_failed", []string{"ContractId"}},
			{"releasing what nothing holds", "POST", commit, map[string]any{"amount": 3, "kind": "Released", "contractId": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}, 400, "validation_failed", []string{"Kind"}},
			{"commitment as text", "POST", commit, "kind=Actual", 415, "unsupported_media_type", nil},
		}
		snaps := func() [2]string { return [2]string{e.snapshot(t, draft.ID), e.snapshot(t, appr.ID)} }
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := snaps()
				req := testkit.Request{Method: tc.method, Path: tc.path, Token: e.admin, Body: tc.body}
				if s, ok := tc.body.(string); ok && !strings.HasPrefix(s, "{") {
					req.ContentType = "text/plain"
				}
				testkit.WantProblem(t, e.app.Do(req), tc.status, tc.code, tc.fields...)
				if snaps() != before || budgets() != nBudgets {
					t.Error("a refused request wrote something")
				}
			})
		}
		e.checkTotals(t)
	})
}

// TestAccess checks 401, 403 by role (DESIGN §2) and 404.
func TestAccess(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		b, l := e.approvedLine(t, "Block", 100)
		draft := e.newBudget(t, nil)
		finance := e.token(t, "Finance")
		drafter := e.token(t, "Drafter")
		pm := e.token(t, "ProjectManager")
		director := e.token(t, "Director")
		unknown := "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
		linePath := "/api/budgets/" + b.ID + "/lines/" + l.ID
		cases := []struct {
			name, method, path, token string
			body                      any
			status                    int
		}{
			{"no token", "GET", "/api/budgets", "", nil, 401},
			{"no token on detail", "GET", "/api/budgets/" + b.ID, "", nil, 401},
			{"no token on commitments", "POST", linePath + "/commitments", "", map[string]any{"amount": 1, "kind": "Actual"}, 401},
			{"drafter cannot read", "GET", "/api/budgets", drafter, nil, 403},
			{"finance reads", "GET", "/api/budgets/" + b.ID, finance, nil, 200},
			{"finance cannot create", "POST", "/api/budgets", finance, map[string]any{"code": "X1", "name": "x", "fiscalYear": 2026}, 403},
			{"finance cannot adjust", "POST", linePath + "/adjustments", finance, map[string]any{"delta": 1, "reason": "x"}, 403},
			{"finance cannot post", "POST", linePath + "/commitments", finance, map[string]any{"amount": 1, "kind": "Actual"}, 403},
			{"finance cannot approve", "POST", "/api/budgets/" + draft.ID + "/approve", finance, nil, 403},
			{"project manager creates", "POST", "/api/budgets", pm, map[string]any{"code": "PM-1", "name": "x", "fiscalYear": 2026}, 201},
			{"project manager adjusts", "POST", linePath + "/adjustments", pm, map[string]any{"delta": 1, "reason": "x"}, 201},
			{"project manager cannot delete", "DELETE", "/api/budgets/" + draft.ID, pm, nil, 403},
			{"director cannot create", "POST", "/api/budgets", director, map[string]any{"code": "D-1", "name": "x", "fiscalYear": 2026}, 403},
			{"director updates a line", "PUT", linePath, director, map[string]any{"code": "L1", "name": "Đổi tên"}, 200},
			{"unknown budget", "GET", "/api/budgets/" + unknown, e.admin, nil, 404},
			{"malformed budget id", "GET", "/api/budgets/xyz", e.admin, nil, 404},
			{"unknown budget on put", "PUT", "/api/budgets/" + unknown, e.admin, map[string]any{}, 404},
			{"unknown budget on delete", "DELETE", "/api/budgets/" + unknown, e.admin, nil, 404},
			{"unknown budget on approve", "POST", "/api/budgets/" + unknown + "/approve", e.admin, nil, 404},
			{"unknown budget on lines", "POST", "/api/budgets/" + unknown + "/lines", e.admin, map[string]any{}, 404},
			{"unknown line", "PUT", "/api/budgets/" + b.ID + "/lines/" + unknown, e.admin, map[string]any{}, 404},
			{"line of another budget", "DELETE", "/api/budgets/" + draft.ID + "/lines/" + l.ID, e.admin, nil, 404},
			{"unknown line adjusted", "POST", "/api/budgets/" + b.ID + "/lines/" + unknown + "/adjustments", e.admin, map[string]any{}, 404},
			{"unknown line committed", "POST", "/api/budgets/" + b.ID + "/lines/" + unknown + "/commitments", e.admin, map[string]any{}, 404},
			{"admin deletes a draft", "DELETE", "/api/budgets/" + draft.ID, e.admin, nil, 204},
			{"deleted is gone", "GET", "/api/budgets/" + draft.ID, e.admin, nil, 404},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(tc.method, tc.path, tc.token, tc.body)
				if r.Status != tc.status {
					t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
				}
			})
		}
	})
}

// TestDraftEdits covers what only a Draft budget allows.
func TestDraftEdits(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		b := e.newBudget(t, map[string]any{"code": "NS-EDIT"})
		testkit.WantProblem(t, e.do("POST", "/api/budgets/"+b.ID+"/approve", e.admin, nil), 409, "invalid_transition")
		l := e.addLine(t, b.ID, "L1", 100)
		tmp := e.addLine(t, b.ID, "L2", 50)
		r := e.do("DELETE", "/api/budgets/"+b.ID+"/lines/"+tmp.ID, e.admin, nil)
		if r.Status != 204 {
			t.Fatalf("delete line: %d %s", r.Status, r.Body)
		}
		r = e.do("PUT", "/api/budgets/"+b.ID, e.admin, map[string]any{"code": "NS-EDIT-2", "name": "Đổi", "fiscalYear": 2027,
			"projectId": e.project2, "currency": "USD", "version": 1})
		if r.Status != 200 {
			t.Fatalf("update draft: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &b)
		if b.Code != "NS-EDIT-2" || b.FiscalYear != 2027 || b.Currency != "USD" || *b.ProjectID != e.project2 || len(b.Lines) != 1 {
			t.Errorf("updated draft %+v", b)
		}
		wantAmounts(t, "after delete", budgetFigures(b), "100", "0", "0", "0", "100")
		// A line with a commitment, even of a Draft budget, stays.
		e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l.ID+"/commitments", e.admin, map[string]any{"amount": 1, "kind": "Actual"})
		testkit.WantProblem(t, e.do("DELETE", "/api/budgets/"+b.ID+"/lines/"+l.ID, e.admin, nil), 409, "not_deletable")
		r = e.do("DELETE", "/api/budgets/"+b.ID, e.admin, nil)
		if r.Status != 204 {
			t.Fatalf("delete draft: %d %s", r.Status, r.Body)
		}
		// The code of a deleted budget can be used again.
		e.newBudget(t, map[string]any{"code": "NS-EDIT-2"})
	})
}

// Every route of the module is documented, and every documented operation
// under /api/budgets is served by it.
func TestOpenAPIMatchesRoutes(t *testing.T) {
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
		if strings.HasPrefix(op.Path, "/api/budgets") {
			documented = append(documented, op.String())
		}
	}
	for _, r := range e.app.Kernel.Routes() {
		if r.Module == "budget" {
			mounted = append(mounted, r.Method+" "+openapi.OpenAPIPath(r.Path))
		} else if strings.HasPrefix(r.Path, "/api/budgets") {
			t.Errorf("module %s serves %s %s", r.Module, r.Method, r.Path)
		}
	}
	slices.Sort(documented)
	slices.Sort(mounted)
	if !slices.Equal(documented, mounted) || len(mounted) != 11 {
		t.Errorf("documented %v\nmounted    %v", documented, mounted)
	}
}
