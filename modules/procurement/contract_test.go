package procurement_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

// The contract of an approved evaluation: the winner as supplier, its
// amount as value, linked both ways; only in DaDuyet, only once.
func TestContractFromEvaluation(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		proc := e.token("Procurement")
		v := e.ready(t, "A")
		post := func(token, id string, body any) *testkit.Response {
			return e.do("POST", base+"/"+id+"/contract", token, body)
		}
		testkit.WantProblem(t, post(proc, v.ID, map[string]any{"contractType": "Supply"}), 409, "invalid_transition") // a draft
		v = e.drive(t, v, DaDuyet)
		testkit.WantProblem(t, post(proc, v.ID, map[string]any{}), 400, "validation_failed", "ContractType")
		testkit.WantProblem(t, post(proc, v.ID, map[string]any{"contractType": "Barter"}), 400, "validation_failed", "ContractType")
		testkit.WantProblem(t, post(proc, v.ID, `{"contractType":`), 400, "validation_failed", "Body")
		testkit.WantProblem(t, post(e.token("Drafter"), v.ID, map[string]any{"contractType": "Supply"}), 403, "forbidden") // cannot see it
		if n := e.count(t, "SELECT COUNT(*) FROM contracts"); n != 0 {
			t.Fatalf("%d contracts after refusals", n)
		}
		r := post(proc, v.ID, map[string]any{"contractType": "Supply"})
		if r.Status != 201 {
			t.Fatalf("create contract: %d %s", r.Status, r.Body)
		}
		var got evaluation
		r.JSON(t, &got)
		if got.ContractID == nil || r.Header.Get("Location") != "/api/contracts/"+*got.ContractID {
			t.Fatalf("contractId %v, Location %q", got.ContractID, r.Header.Get("Location"))
		}
		var c struct {
			ID, SupplierID, ContractType, Phase, DrafterID, Title string
			ProjectID, PurchaseEvaluationID                       *string
			Value                                                 json.Number
		}
		cr := e.do("GET", "/api/contracts/"+*got.ContractID, proc, nil)
		if cr.Status != 200 {
			t.Fatalf("the creator cannot open the contract: %d %s", cr.Status, cr.Body)
		}
		cr.JSON(t, &c)
		if c.SupplierID != e.suppliers[0] || c.Value != "1000000" || c.ContractType != "Supply" || c.Phase != "DangSoanThao" ||
			c.ProjectID == nil || *c.ProjectID != e.project || c.PurchaseEvaluationID == nil || *c.PurchaseEvaluationID != v.ID ||
			c.DrafterID != e.users["Procurement"].id {
			t.Errorf("contract %+v", c)
		}
		testkit.WantProblem(t, post(proc, v.ID, map[string]any{"contractType": "Supply"}), 409, "invalid_transition")
		rejected := e.drive(t, e.ready(t, "A"), TuChoi)
		testkit.WantProblem(t, post(proc, rejected.ID, map[string]any{"contractType": "Supply"}), 409, "invalid_transition")
		if n := e.count(t, "SELECT COUNT(*) FROM contracts"); n != 1 {
			t.Errorf("%d contracts", n)
		}
	})
}

// Of 25 concurrent requests for one evaluation's contract exactly one
// creates it.
func TestConcurrentContractCreation(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		v := e.drive(t, e.ready(t, "B"), DaDuyet)
		var wg sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		for range 25 {
			wg.Go(func() {
				st, _ := e.raw("POST", base+"/"+v.ID+"/contract", e.token("Procurement"), map[string]any{"contractType": "Subcontract"})
				mu.Lock()
				statuses[st]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if statuses[201] != 1 || statuses[409] != 24 {
			t.Errorf("statuses %v", statuses)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM contracts WHERE purchase_evaluation_id = ?", v.ID); n != 1 {
			t.Errorf("%d contracts", n)
		}
	})
}

// The supplier's standing: approved evaluations it won and the latest
// approval, on GET /api/suppliers/{id}; master data a live evaluation uses
// cannot be deleted.
func TestSupplierStanding(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		standing := func(id string) map[string]any {
			var s map[string]any
			e.do("GET", "/api/suppliers/"+id, e.admin, nil).JSON(t, &s)
			return s
		}
		if s := standing(e.suppliers[0]); s["approvedEvaluations"] != 0.0 || s["lastApprovedAt"] != nil {
			t.Errorf("before: %v %v", s["approvedEvaluations"], s["lastApprovedAt"])
		}
		e.drive(t, e.ready(t, "A"), DaDuyet)
		e.app.Clock.Advance(2 * time.Hour)
		e.drive(t, e.ready(t, "B"), DaDuyet)
		last := e.app.Clock.Now().UTC().Format(time.RFC3339)
		e.drive(t, e.ready(t, "A"), TuChoi)         // rejected: not counted
		e.drive(t, e.ready(t, "A"), ChoCEODuyetNCC) // not approved yet
		s := standing(e.suppliers[0])
		if s["approvedEvaluations"] != 2.0 || s["lastApprovedAt"] != last {
			t.Errorf("after: %v %v, want 2 %s", s["approvedEvaluations"], s["lastApprovedAt"], last)
		}
		if s := standing(e.suppliers[1]); s["approvedEvaluations"] != 0.0 { // quoted, never chosen
			t.Errorf("a losing supplier: %v", s["approvedEvaluations"])
		}
		// In use by live evaluations: 409 in_use.
		testkit.WantProblem(t, e.do("DELETE", "/api/suppliers/"+e.suppliers[1], e.admin, nil), 409, "in_use")
		testkit.WantProblem(t, e.do("DELETE", "/api/projects/"+e.project, e.admin, nil), 409, "in_use")
		unused := e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC-Z", "name": "Chưa báo giá", "supplierType": "Service"})
		if r := e.do("DELETE", "/api/suppliers/"+unused, e.admin, nil); r.Status != 204 {
			t.Errorf("delete unused supplier: %d", r.Status)
		}
	})
}

// modules.procurement.enabled: false removes its routes, menu and facts;
// contracts keep working.
func TestDisabled(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d, testkit.WithConfig("modules.procurement.enabled", false))
		if e.enabled() {
			t.Fatal("procurement routes are mounted")
		}
		if r := e.do("GET", base, e.admin, nil); r.Status != 404 {
			t.Errorf("GET %s: %d", base, r.Status)
		}
		var menus []struct{ Key string }
		e.do("GET", "/api/menus/me", e.admin, nil).JSON(t, &menus)
		for _, m := range menus {
			if m.Key == "PurchaseEvaluations" {
				t.Error("the menu is still there")
			}
		}
		sup := e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC-X", "name": "X", "supplierType": "Material"})
		prj := e.masterdata(t, "/api/projects", map[string]any{"code": "DA-X", "name": "X"})
		var s map[string]any
		e.do("GET", "/api/suppliers/"+sup, e.admin, nil).JSON(t, &s)
		if _, ok := s["approvedEvaluations"]; ok {
			t.Errorf("supplier facts without procurement: %v", s)
		}
		if _, ok := s["lastApprovedAt"]; ok {
			t.Errorf("supplier facts without procurement: %v", s)
		}
		r := e.do("POST", "/api/contracts", e.admin, map[string]any{"title": "Hợp đồng", "contractType": "Supply", "supplierId": sup,
			"projectId": prj, "value": 1000})
		if r.Status != 201 {
			t.Errorf("contracts without procurement: %d %s", r.Status, r.Body)
		}
	})
}
