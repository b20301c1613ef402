package budget_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	budgetmod "github.com/contractflow/contractflow/modules/budget"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestContractHookBlock drives contracts naming one line of a Block budget
// through the contracts API: reserved at DangTrinhKy, refused when short
// (the contract stays, nothing is written), kept at DangDongDau, committed
// at DaPhatHanh, released at TuChoi.
func TestContractHookBlock(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		b, l := e.approvedLine(t, "Block", 1000)

		first := e.newContract(t, map[string]any{"budgetLineId": l.ID, "value": 600})
		e.drive(t, first.ID, DangTrinhKy)
		got := e.get(t, b.ID)
		wantAmounts(t, "after reservation", lineFigures(got.line("L1")), "1000", "600", "0", "0", "400")
		wantAmounts(t, "budget after reservation", budgetFigures(got), "1000", "600", "0", "0", "400")
		if cs := got.line("L1").Commitments; len(cs) != 1 || cs[0].ContractID == nil || *cs[0].ContractID != first.ID ||
			cs[0].Kind != "Reserved" || cs[0].Source != "contract" {
			t.Errorf("line commitments %+v", cs)
		}

		// Short by 100 under Block: 409, the contract stays, nothing written.
		second := e.newContract(t, map[string]any{"budgetLineId": l.ID, "value": 500})
		e.drive(t, second.ID, DangKiemTraCCM)
		before := e.snapshot(t, b.ID)
		r := e.move(second.ID, DangTrinhKy, "")
		testkit.WantProblem(t, r, 409, "budget_exceeded")
		if p := r.Problem(t); !strings.Contains(p.Detail, "short by 100") {
			t.Errorf("detail %q does not say by how much", p.Detail)
		}
		if c := e.contract(t, second.ID); c.Phase != DangKiemTraCCM || c.Version != second.Version+4 {
			t.Errorf("refused contract is %s v%d", c.Phase, c.Version)
		}
		if e.snapshot(t, b.ID) != before {
			t.Error("a refused move wrote to the budget")
		}

		// The reservation stays through DangDongDau and becomes a commitment.
		e.drive(t, first.ID, DangDongDau)
		wantAmounts(t, "at DangDongDau", lineFigures(e.get(t, b.ID).line("L1")), "1000", "600", "0", "0", "400")
		e.drive(t, first.ID, DaPhatHanh)
		got = e.get(t, b.ID)
		wantAmounts(t, "published", lineFigures(got.line("L1")), "1000", "0", "600", "0", "400")
		if cs := got.line("L1").Commitments; len(cs) != 1 || cs[0].Kind != "Committed" || *cs[0].ContractID != first.ID {
			t.Errorf("line commitments %+v", cs)
		}

		// An adjustment makes room; the refused contract now moves.
		e.do("POST", "/api/budgets/"+b.ID+"/lines/"+l.ID+"/adjustments", e.admin, map[string]any{"delta": 100, "reason": "Bổ sung"})
		if r := e.move(second.ID, DangTrinhKy, ""); r.Status != 200 {
			t.Fatalf("move after adjustment: %d %s", r.Status, r.Body)
		}
		wantAmounts(t, "second reserved", lineFigures(e.get(t, b.ID).line("L1")), "1100", "500", "600", "0", "0")

		// Rejected: released.
		if r := e.move(second.ID, TuChoi, "Không ký"); r.Status != 200 {
			t.Fatalf("reject: %d %s", r.Status, r.Body)
		}
		wantAmounts(t, "rejected", lineFigures(e.get(t, b.ID).line("L1")), "1100", "0", "600", "0", "500")
		if n := e.count(t, "SELECT COUNT(*) FROM budget_commitments WHERE contract_id = ? AND kind = 'Released'", second.ID); n != 1 {
			t.Errorf("%d release rows for the rejected contract, want 1", n)
		}
		// Contracts without a line move untouched by the check.
		plain := e.newContract(t, map[string]any{"value": 999999})
		e.drive(t, plain.ID, DaPhatHanh)
		e.checkTotals(t)
	})
}

// TestContractHookWarn: under Warn the move happens, and the answer, the
// history comment and an event say so.
func TestContractHookWarn(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		var overdrawn atomic.Int64
		e.app.Kernel.App().Bus.Subscribe(budgetmod.TopicOverdrawn, events.AfterCommit, func(_ context.Context, ev events.Event) error {
			// What the notifications module stores: the drafter and the
			// budget keepers are told, not the administrator who moved it.
			if o, ok := ev.(budgetmod.Overdrawn); ok && o.Amount > 0 {
				n := o.Notifications()
				if len(n) == 1 && n[0].Kind == "budget.overdrawn" && n[0].EntityID == o.ContractID && len(n[0].UserIDs) == 1 &&
					n[0].UserIDs[0] == o.DrafterID && n[0].ExceptUserID == *o.ActorID && len(n[0].Roles) == 2 {
					overdrawn.Add(1)
				}
			}
			return nil
		})
		b, l := e.approvedLine(t, "Warn", 1000)
		c := e.newContract(t, map[string]any{"budgetLineId": l.ID, "value": 1500})
		e.drive(t, c.ID, DangKiemTraCCM)
		r := e.move(c.ID, DangTrinhKy, "Trình ký")
		if r.Status != 200 {
			t.Fatalf("move under Warn: %d %s", r.Status, r.Body)
		}
		var moved contract
		r.JSON(t, &moved)
		if moved.Phase != DangTrinhKy || len(moved.Warnings) != 1 || !strings.Contains(moved.Warnings[0], "short by 500") {
			t.Fatalf("moved %s with warnings %q", moved.Phase, moved.Warnings)
		}
		last := e.contract(t, c.ID).Approvals
		var comment string
		for _, a := range last {
			if a.ToPhase == DangTrinhKy {
				comment = a.Comment
			}
		}
		if !strings.Contains(comment, "Trình ký") || !strings.Contains(comment, "Warning: Budget overdrawn") {
			t.Errorf("history comment %q lacks the warning", comment)
		}
		if overdrawn.Load() != 1 {
			t.Errorf("%d overdrawn events, want 1", overdrawn.Load())
		}
		wantAmounts(t, "overdrawn", lineFigures(e.get(t, b.ID).line("L1")), "1000", "1500", "0", "0", "-500")
		// Within the remaining amount there is no warning.
		b2, l2 := e.approvedLine(t, "Warn", 1000)
		c2 := e.newContract(t, map[string]any{"budgetLineId": l2.ID, "value": 1000})
		e.drive(t, c2.ID, DangKiemTraCCM)
		r = e.move(c2.ID, DangTrinhKy, "")
		moved = contract{}
		r.JSON(t, &moved)
		if r.Status != 200 || len(moved.Warnings) != 0 {
			t.Errorf("exact reservation: %d %q", r.Status, moved.Warnings)
		}
		wantAmounts(t, "exact", lineFigures(e.get(t, b2.ID).line("L1")), "1000", "1000", "0", "0", "0")
		e.checkTotals(t)
	})
}

// TestContractHookBudgetState: a line of a budget that is not Approved
// refuses signature whatever onExceed says; a Closed budget takes no new
// reservation but still commits one it holds.
func TestContractHookBudgetState(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		draft := e.newBudget(t, map[string]any{"onExceed": "Warn"})
		dl := e.addLine(t, draft.ID, "L1", 1_000_000)
		c := e.newContract(t, map[string]any{"budgetLineId": dl.ID, "value": 10})
		e.drive(t, c.ID, DangKiemTraCCM)
		r := e.move(c.ID, DangTrinhKy, "")
		testkit.WantProblem(t, r, 409, "budget_exceeded")
		if p := r.Problem(t); !strings.Contains(p.Detail, "not approved") {
			t.Errorf("detail %q", p.Detail)
		}
		e.approve(t, draft.ID)
		if r := e.move(c.ID, DangTrinhKy, ""); r.Status != 200 {
			t.Fatalf("move once approved: %d %s", r.Status, r.Body)
		}

		// Closing keeps what is held; a new reservation is refused.
		late := e.newContract(t, map[string]any{"budgetLineId": dl.ID, "value": 10})
		e.drive(t, late.ID, DangKiemTraCCM)
		b := e.get(t, draft.ID)
		r = e.do("PUT", "/api/budgets/"+b.ID, e.admin, map[string]any{"code": b.Code, "name": b.Name, "projectId": e.project,
			"fiscalYear": b.FiscalYear, "onExceed": "Warn", "status": "Closed"})
		if r.Status != 200 {
			t.Fatalf("close: %d %s", r.Status, r.Body)
		}
		testkit.WantProblem(t, e.move(late.ID, DangTrinhKy, ""), 409, "budget_exceeded")
		e.drive(t, c.ID, DaPhatHanh)
		wantAmounts(t, "closed budget", lineFigures(e.get(t, b.ID).line("L1")), "1000000", "0", "10", "0", "999990")

		// Naming a line of a Closed budget is refused when drafting.
		testkit.WantProblem(t, e.do("POST", "/api/contracts", e.admin, e.contractBody(map[string]any{"budgetLineId": dl.ID})), 400, "validation_failed", "BudgetLineId")
		e.checkTotals(t)
	})
}

// TestContractLineValidation: budgetLineId is checked when a contract is
// drafted or edited.
func TestContractLineValidation(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		_, own := e.approvedLine(t, "Block", 100)
		other := e.newBudget(t, map[string]any{"projectId": e.project2})
		ol := e.addLine(t, other.ID, "L1", 100)
		anyProject := e.newBudget(t, map[string]any{"projectId": nil})
		al := e.addLine(t, anyProject.ID, "L1", 100)
		contracts := func() int64 { return e.count(t, "SELECT COUNT(*) FROM contracts") }
		n := contracts()
		for name, over := range map[string]map[string]any{
			"missing line":              {"budgetLineId": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
			"another project's budget":  {"budgetLineId": ol.ID},
			"framework without project": {"budgetLineId": own.ID, "contractType": "FrameworkSupply", "projectId": nil},
		} {
			t.Run(name, func(t *testing.T) {
				testkit.WantProblem(t, e.do("POST", "/api/contracts", e.admin, e.contractBody(over)), 400, "validation_failed", "BudgetLineId")
				if contracts() != n {
					t.Error("a refused contract was written")
				}
			})
		}
		for _, over := range []map[string]any{
			{"budgetLineId": own.ID},
			{"budgetLineId": al.ID},
			{"budgetLineId": al.ID, "projectId": e.project2},
			{"budgetLineId": al.ID, "contractType": "FrameworkSupply", "projectId": nil},
		} {
			e.newContract(t, over)
		}
		// Editing a draft is checked the same way.
		c := e.newContract(t, map[string]any{"budgetLineId": own.ID})
		body := e.contractBody(map[string]any{"budgetLineId": ol.ID, "title": "Sửa"})
		testkit.WantProblem(t, e.do("PUT", "/api/contracts/"+c.ID, e.admin, body), 400, "validation_failed", "BudgetLineId")
		body["projectId"] = e.project2
		if r := e.do("PUT", "/api/contracts/"+c.ID, e.admin, body); r.Status != 200 {
			t.Errorf("moving the contract to the line's project: %d %s", r.Status, r.Body)
		}
		// A deleted budget's lines are gone too.
		e.do("DELETE", "/api/budgets/"+other.ID, e.admin, nil)
		testkit.WantProblem(t, e.do("POST", "/api/contracts", e.admin, e.contractBody(map[string]any{"budgetLineId": ol.ID, "projectId": e.project2})), 400, "validation_failed", "BudgetLineId")
		// A contract naming a line deleted since cannot go to signature.
		e.drive(t, c.ID, DangKiemTraCCM)
		testkit.WantProblem(t, e.move(c.ID, DangTrinhKy, ""), 409, "budget_exceeded")
	})
}

// TestReleaseOnDeleteAndReturn: deleting a contract releases what it holds
// on any line; a definition with a return out of DangTrinhKy releases on the
// return and reserves again on the way back.
func TestReleaseOnDeleteAndReturn(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		b, l := e.approvedLine(t, "Block", 1000)
		other, ol := e.approvedLine(t, "Warn", 1000)
		// A contract in DangSoanThao holding entries posted for it by hand,
		// on its own line and on another one.
		c := e.newContract(t, map[string]any{"budgetLineId": l.ID, "value": 300})
		for _, post := range []struct {
			budget, line string
			body         map[string]any
		}{
			{b.ID, l.ID, map[string]any{"contractId": c.ID, "amount": 300, "kind": "Reserved"}},
			{other.ID, ol.ID, map[string]any{"contractId": c.ID, "amount": 100, "kind": "Reserved"}},
			{other.ID, ol.ID, map[string]any{"contractId": c.ID, "amount": 50, "kind": "Committed"}},
		} {
			if r := e.do("POST", "/api/budgets/"+post.budget+"/lines/"+post.line+"/commitments", e.admin, post.body); r.Status != 201 {
				t.Fatalf("post: %d %s", r.Status, r.Body)
			}
		}
		if r := e.do("DELETE", "/api/contracts/"+c.ID, e.admin, nil); r.Status != 204 {
			t.Fatalf("delete contract: %d %s", r.Status, r.Body)
		}
		wantAmounts(t, "after delete", lineFigures(e.get(t, b.ID).line("L1")), "1000", "0", "0", "0", "1000")
		wantAmounts(t, "other line after delete", lineFigures(e.get(t, other.ID).line("L1")), "1000", "0", "0", "0", "1000")
		if n := e.count(t, "SELECT COUNT(*) FROM budget_commitments WHERE contract_id = ? AND kind = 'Released' AND note = 'Released: contract deleted.'", c.ID); n != 2 {
			t.Errorf("%d release rows on delete, want one per line", n)
		}
		e.checkTotals(t)

		e.withReturnFromSignature(t)
		c = e.newContract(t, map[string]any{"budgetLineId": l.ID, "value": 700})
		e.drive(t, c.ID, DangTrinhKy)
		wantAmounts(t, "reserved", lineFigures(e.get(t, b.ID).line("L1")), "1000", "700", "0", "0", "300")
		if r := e.move(c.ID, DangKiemTraCCM, "Trả lại kiểm tra"); r.Status != 200 {
			t.Fatalf("return: %d %s", r.Status, r.Body)
		}
		wantAmounts(t, "returned", lineFigures(e.get(t, b.ID).line("L1")), "1000", "0", "0", "0", "1000")
		e.drive(t, c.ID, DangTrinhKy)
		wantAmounts(t, "reserved again", lineFigures(e.get(t, b.ID).line("L1")), "1000", "700", "0", "0", "300")
		e.checkTotals(t)
	})
}

// TestReleaseOnDeletedLine: what a contract holds on a line is released when
// it leaves signature even if the line is gone since (here an entry posted
// by hand on a Draft budget, which let the move through without a check,
// and the budget deleted afterwards).
func TestReleaseOnDeletedLine(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		draft := e.newBudget(t, nil)
		dl := e.addLine(t, draft.ID, "L1", 1000)
		c := e.newContract(t, map[string]any{"budgetLineId": dl.ID, "value": 400})
		e.drive(t, c.ID, DangKiemTraCCM)
		r := e.do("POST", "/api/budgets/"+draft.ID+"/lines/"+dl.ID+"/commitments", e.admin, map[string]any{"contractId": c.ID, "amount": 400, "kind": "Reserved"})
		if r.Status != 201 {
			t.Fatalf("post: %d %s", r.Status, r.Body)
		}
		e.drive(t, c.ID, DangTrinhKy) // already holds a reservation: no check
		if r := e.do("DELETE", "/api/budgets/"+draft.ID, e.admin, nil); r.Status != 204 {
			t.Fatalf("delete budget: %d %s", r.Status, r.Body)
		}
		if r := e.move(c.ID, TuChoi, "Không ký"); r.Status != 200 {
			t.Fatalf("reject: %d %s", r.Status, r.Body)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM budget_commitments WHERE contract_id = ? AND closed_at IS NULL", c.ID); n != 0 {
			t.Errorf("%d entries still open", n)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM budget_commitments WHERE contract_id = ? AND kind = 'Released' AND amount = 40000", c.ID); n != 1 {
			t.Errorf("%d release rows, want 1", n)
		}
		// The deleted line and budget hold nothing either.
		if n := e.count(t, "SELECT COUNT(*) FROM budget_lines l JOIN budgets b ON b.id = l.budget_id WHERE l.id = ? AND l.reserved_amount = 0 AND l.remaining = 100000 AND b.reserved_total = 0", dl.ID); n != 1 {
			t.Error("the deleted line or its budget still counts the reservation")
		}
	})
}

// withReturnFromSignature publishes contract-default v2, the seeded
// definition plus a return DangTrinhKy → DangKiemTraCCM, and assigns it to
// Subcontract.
func (e *env) withReturnFromSignature(t *testing.T) {
	t.Helper()
	r := e.do("GET", "/api/workflows?documentKind=contract", e.admin, nil)
	var defs []struct {
		ID, Key string
		Version int
	}
	r.JSON(t, &defs)
	var from string
	for _, d := range defs {
		if d.Key == "contract-default" && d.Version == 1 {
			from = d.ID
		}
	}
	r = e.do("POST", "/api/workflows", e.admin, map[string]any{"documentKind": "contract", "key": "contract-default", "name": "Có trả lại", "fromId": from})
	if r.Status != 201 {
		t.Fatalf("draft: %d %s", r.Status, r.Body)
	}
	var d map[string]any
	r.JSON(t, &d)
	d["transitions"] = append(d["transitions"].([]any), map[string]any{"from": DangTrinhKy, "to": DangKiemTraCCM, "kind": "return",
		"roles": []string{"Director"}, "guard": "", "normal": false})
	id := d["id"].(string)
	for _, step := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/api/workflows/" + id, map[string]any{"name": d["name"], "initialPhase": d["initialPhase"], "steps": d["steps"], "transitions": d["transitions"]}},
		{"POST", "/api/workflows/" + id + "/publish", nil},
		{"PUT", "/api/workflows/assignments", map[string]any{"documentType": "contract.Subcontract", "workflowDefinitionId": id}},
	} {
		if r := e.do(step.method, step.path, e.admin, step.body); r.Status != 200 {
			t.Fatalf("%s %s: %d %s", step.method, step.path, r.Status, r.Body)
		}
	}
}

// TestModuleDisabled: without the budget module contracts move without
// the check, and its routes and menu are gone.
func TestModuleDisabled(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		c := e.newContract(t, map[string]any{"budgetLineId": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "value": 5})
		e.drive(t, c.ID, DaPhatHanh)
		if r := e.do("GET", "/api/budgets", e.admin, nil); r.Status != 404 {
			t.Errorf("GET /api/budgets: %d", r.Status)
		}
		r := e.do("GET", "/api/menus", e.admin, nil)
		if strings.Contains(string(r.Body), `"Budgets"`) {
			t.Errorf("menu still has Budgets: %s", r.Body)
		}
	}, testkit.WithConfig("modules.budget.enabled", false))
}

// TestSLAMoveOverdraws: the SLA job's move into signature reserves as a
// person's does, and an overdraw under Warn is recorded once in its
// history comment (on Postgres the move's first run sends the reservation
// with the commit; when it does not fit, the move runs again and settles).
func TestSLAMoveOverdraws(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		b, l := e.approvedLine(t, "Warn", 1000)
		c := e.newContract(t, map[string]any{"budgetLineId": l.ID, "value": 1500})
		e.drive(t, c.ID, DangKiemTraCCM)
		e.app.Clock.Advance(30 * 24 * time.Hour)
		for _, j := range e.app.Kernel.Jobs() {
			if j.Name == "workflow.sla" {
				if err := j.Run(context.Background()); err != nil {
					t.Fatalf("sla job: %v", err)
				}
			}
		}
		got := e.contract(t, c.ID)
		if got.Phase != DangTrinhKy {
			t.Fatalf("phase %s after the SLA job, want %s", got.Phase, DangTrinhKy)
		}
		var comments []string
		for _, a := range got.Approvals {
			if a.ToPhase == DangTrinhKy {
				comments = append(comments, a.Comment)
			}
		}
		if len(comments) != 1 || strings.Count(comments[0], "Warning: Budget overdrawn") != 1 || !strings.HasPrefix(comments[0], "Automatic move") {
			t.Errorf("history comments into signature %q: want one automatic move warning once", comments)
		}
		wantAmounts(t, "overdrawn by the job", lineFigures(e.get(t, b.ID).line("L1")), "1000", "1500", "0", "0", "-500")
		e.checkTotals(t)
	})
}
