package procurement_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

// Creating: the policy follows procurement.policyBThreshold unless chosen,
// the voucher code counts per policy and year, the draft is pinned to its
// policy's definition and starts with seven days.
func TestCreate(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		proc := e.token("Procurement")
		r := e.do("POST", base, proc, e.body(map[string]any{"estimatedValue": 499999999.99, "paymentTerms": []map[string]any{
			{"milestone": "Tạm ứng", "percent": 33.33, "dueDays": 0}, {"milestone": "Giao hàng", "percent": 33.33},
			{"milestone": "Nghiệm thu", "percent": 33.34, "dueDays": 30}}}))
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var a evaluation
		r.JSON(t, &a)
		if loc := r.Header.Get("Location"); loc != base+"/"+a.ID {
			t.Errorf("Location %q", loc)
		}
		if a.Policy != "A" || a.MaPhieu != "PE/2026/A/001" || a.Phase != DangSoanThao || a.CreatedBy != e.users["Procurement"].id ||
			a.SLADeadline == nil || !a.SLADeadline.Equal(t0.Add(168*time.Hour)) || a.Currency != "VND" || a.Version != 1 ||
			a.Project == nil || a.Project.Code != "DA001" || len(a.PaymentTerms) != 3 || a.PaymentTerms[2].Percent != "33.34" ||
			len(a.Quotations) != 0 || len(a.History) != 0 || len(a.RequiredOpinions) != 0 {
			t.Errorf("policy A draft %+v", a)
		}
		if !slices.Equal(a.allowed(), []string{ChoDuAn}) {
			t.Errorf("allowed %v", a.allowed())
		}
		b := e.create(t, proc, map[string]any{"estimatedValue": 500000000})
		if b.Policy != "B" || b.MaPhieu != "PE/2026/B/001" || !slices.Equal(b.RequiredOpinions, []string{"PRO", "CCM", "FIN"}) {
			t.Errorf("policy B draft %s %s %v", b.Policy, b.MaPhieu, b.RequiredOpinions)
		}
		if b.WorkflowDefinitionID == a.WorkflowDefinitionID {
			t.Error("both policies pinned the same definition")
		}
		chosen := e.create(t, e.token("Drafter"), map[string]any{"estimatedValue": 900000000, "policy": "A"})
		if chosen.Policy != "A" || chosen.MaPhieu != "PE/2026/A/002" {
			t.Errorf("chosen policy %s %s", chosen.Policy, chosen.MaPhieu)
		}
		// The year is the business calendar's: 2026-12-31 18:00 UTC is
		// already 2027 in Ho Chi Minh City.
		e.app.Clock.Set(time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC))
		if v := e.create(t, proc, map[string]any{"policy": "A"}); v.MaPhieu != "PE/2027/A/001" {
			t.Errorf("new year %s", v.MaPhieu)
		}
	})
}

// Bad bodies are 400 naming the field, and write nothing.
func TestCreateValidation(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		proc := e.token("Procurement")
		inactiveProject := e.masterdata(t, "/api/projects", map[string]any{"code": "DA-OFF", "name": "Tạm dừng", "isActive": false})
		terms := func(ps ...any) []map[string]any {
			out := []map[string]any{}
			for _, p := range ps {
				out = append(out, map[string]any{"milestone": "Đợt", "percent": p})
			}
			return out
		}
		cases := []struct {
			name   string
			body   any
			fields []string
		}{
			{"malformed JSON", `{"title": "x",`, []string{"Body"}},
			{"not an object", `[1]`, []string{"Body"}},
			{"no title", e.body(map[string]any{"title": nil}), []string{"Title"}},
			{"blank title", e.body(map[string]any{"title": "   "}), []string{"Title"}},
			{"no project", e.body(map[string]any{"projectId": nil}), []string{"ProjectId"}},
			{"project not a uuid", e.body(map[string]any{"projectId": "DA001"}), []string{"ProjectId"}},
			{"unknown project", e.body(map[string]any{"projectId": "0190a5c4-0000-7000-8000-000000000000"}), []string{"ProjectId"}},
			{"inactive project", e.body(map[string]any{"projectId": inactiveProject}), []string{"ProjectId"}},
			{"unknown policy", e.body(map[string]any{"policy": "C"}), []string{"Policy"}},
			{"unknown category", e.body(map[string]any{"category": "Food"}), []string{"Category"}},
			{"value as a string", e.body(map[string]any{"estimatedValue": "100"}), []string{"EstimatedValue"}},
			{"three decimals", e.body(map[string]any{"estimatedValue": 1.005}), []string{"EstimatedValue"}},
			{"negative value", e.body(map[string]any{"estimatedValue": -1}), []string{"EstimatedValue"}},
			{"title as a number", e.body(map[string]any{"title": 5}), []string{"Title"}},
			{"percentages under 100", e.body(map[string]any{"paymentTerms": terms(30, 60)}), []string{"PaymentTerms"}},
			{"percentages over 100", e.body(map[string]any{"paymentTerms": terms(50, 50.01)}), []string{"PaymentTerms"}},
			{"zero percent", e.body(map[string]any{"paymentTerms": terms(0, 100)}), []string{"PaymentTerms[0].Percent"}},
			{"percent as text", e.body(map[string]any{"paymentTerms": []map[string]any{{"milestone": "x", "percent": "100"}}}), []string{"PaymentTerms.Percent"}},
			{"no milestone", e.body(map[string]any{"paymentTerms": []map[string]any{{"percent": 100}}}), []string{"PaymentTerms[0].Milestone"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				testkit.WantProblem(t, e.do("POST", base, proc, tc.body), 400, "validation_failed", tc.fields...)
			})
		}
		if n := e.count(t, "SELECT COUNT(*) FROM purchase_evaluations"); n != 0 {
			t.Errorf("%d evaluations written", n)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM purchase_evaluation_code_sequences"); n != 0 {
			t.Errorf("refused creates took voucher numbers: %d", n)
		}
	})
}

// 50 concurrent creations get 50 distinct, consecutive voucher codes.
func TestConcurrentVoucherCodes(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		const n = 50
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := []string{}
		for range n {
			wg.Go(func() {
				st, b := e.raw("POST", base, e.token("Procurement"), e.body(map[string]any{"policy": "B"}))
				if st != 201 {
					t.Errorf("create: %d %s", st, b)
					return
				}
				code := string(b[strings.Index(string(b), `"maPhieu":"`)+11:])
				code = code[:strings.Index(code, `"`)]
				mu.Lock()
				codes = append(codes, code)
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.Sort(codes)
		want := make([]string, n)
		for i := range want {
			want[i] = fmt.Sprintf("PE/2026/B/%03d", i+1)
		}
		if !slices.Equal(codes, want) {
			t.Errorf("codes %v", codes)
		}
	})
}

// Who may do what: 401 without a token, 403 without the permission
// (AuthorizedSigner and HrAdmin have no PurchaseEvaluations), before 404
// and 400.
func TestAccess(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		v := e.ready(t, "A")
		q := v.Quotations[0].ID
		missing := "0190a5c4-0000-7000-8000-000000000000"
		type call struct {
			method, path string
			body         any
			needs        string // the permission letter
		}
		calls := []call{
			{"GET", base, nil, "R"},
			{"GET", base + "/inbox", nil, "R"},
			{"POST", base, e.body(nil), "C"},
			{"GET", base + "/" + v.ID, nil, "R"},
			{"PUT", base + "/" + v.ID, e.body(nil), "U"},
			{"DELETE", base + "/" + v.ID, nil, "D"},
			{"POST", base + "/" + v.ID + "/quotations", map[string]any{"supplierId": e.suppliers[1], "amount": 1}, "U"},
			{"PUT", base + "/" + v.ID + "/quotations/" + q, map[string]any{"supplierId": e.suppliers[0], "amount": 1}, "U"},
			{"DELETE", base + "/" + v.ID + "/quotations/" + q, nil, "U"},
			{"POST", base + "/" + v.ID + "/select-winner", map[string]any{"quotationId": q}, "U"},
			{"POST", base + "/" + v.ID + "/transitions", map[string]any{"toPhase": ChoDuAn}, "R"},
			{"PUT", base + "/" + v.ID + "/opinions/PRO", map[string]any{"verdict": "Agree"}, "U"},
			{"POST", base + "/" + v.ID + "/contract", map[string]any{"contractType": "Supply"}, "U"},
		}
		var scenarios []testkit.Scenario
		for _, c := range calls {
			scenarios = append(scenarios,
				testkit.Scenario{Name: "no token " + c.method + " " + c.path, Request: testkit.Request{Method: c.method, Path: c.path, Body: c.body},
					Status: 401, Code: "token_invalid"},
				testkit.Scenario{Name: "AuthorizedSigner " + c.method + " " + c.path, Request: testkit.Request{Method: c.method, Path: c.path,
					Body: c.body, Token: e.token("AuthorizedSigner")}, Status: 403, Code: "forbidden"},
				testkit.Scenario{Name: "HrAdmin " + c.method + " " + c.path, Request: testkit.Request{Method: c.method, Path: c.path,
					Body: c.body, Token: e.token("HrAdmin")}, Status: 403, Code: "forbidden"})
			if c.needs == "C" || c.needs == "D" {
				// Finance has RU: no C, no D.
				scenarios = append(scenarios, testkit.Scenario{Name: "Finance " + c.method + " " + c.path,
					Request: testkit.Request{Method: c.method, Path: c.path, Body: c.body, Token: e.token("Finance")}, Status: 403, Code: "forbidden"})
			}
		}
		scenarios = append(scenarios,
			testkit.Scenario{Name: "403 before 404", Request: testkit.Request{Method: "GET", Path: base + "/" + missing, Token: e.token("AuthorizedSigner")}, Status: 403},
			testkit.Scenario{Name: "unknown id", Request: testkit.Request{Method: "GET", Path: base + "/" + missing, Token: e.admin}, Status: 404, Code: "not_found"},
			testkit.Scenario{Name: "malformed id", Request: testkit.Request{Method: "GET", Path: base + "/not-a-uuid", Token: e.admin}, Status: 404, Code: "not_found"},
			testkit.Scenario{Name: "404 before 400", Request: testkit.Request{Method: "PUT", Path: base + "/" + missing, Token: e.admin, Body: map[string]any{}}, Status: 404},
			testkit.Scenario{Name: "unknown quotation", Request: testkit.Request{Method: "PUT", Path: base + "/" + v.ID + "/quotations/" + missing, Token: e.token("Procurement"),
				Body: map[string]any{"supplierId": e.suppliers[0], "amount": 1}}, Status: 404},
			testkit.Scenario{Name: "unknown id on every sub-resource", Request: testkit.Request{Method: "POST", Path: base + "/" + missing + "/transitions", Token: e.admin,
				Body: map[string]any{"toPhase": ChoDuAn}}, Status: 404},
		)
		e.app.Run(t, scenarios)
		if now := e.get(t, e.admin, v.ID); now.Version != v.Version || len(now.Quotations) != 1 || now.Phase != DangSoanThao {
			t.Errorf("refused calls changed the evaluation: %+v", now)
		}
	})
}
