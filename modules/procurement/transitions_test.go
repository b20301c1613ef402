package procurement_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/testkit"
)

// designMove is one move of the default definitions (DESIGN §7 and the
// module's decisions): every waiting phase has its forward move, a return
// to DangSoanThao and a rejection, by that phase's roles.
type designMove struct {
	from, to, kind string
	roles          []string
}

func designMoves(policy string) []designMove {
	phaseRoles := map[string][]string{ChoDuAn: {"ProjectManager"}, ChoYKienPhongBan: {"Procurement"}, ChoCCMKiemTra: {"CostControl"},
		ChoCEODuyetNCC: {"Director"}}
	path := paths[policy]
	moves := []designMove{{DangSoanThao, ChoDuAn, "forward", []string{"Drafter", "Procurement"}}}
	for i, from := range path[1 : len(path)-1] {
		r := phaseRoles[from]
		moves = append(moves, designMove{from, path[i+2], "forward", r}, designMove{from, DangSoanThao, "return", r},
			designMove{from, TuChoi, "reject", r})
	}
	return moves
}

// canRead are the roles with PurchaseEvaluations.Read (DESIGN §2).
var canRead = []string{"Drafter", "DeptManager", "ProjectManager", "Procurement", "CostControl", "Finance", "Accounting", "Equipment", "Director"}

// Every move of both policies, for each role: the allowed roles (and
// Admin) make it, with a history row and the new phase's deadline; every
// other role is refused with 403 and nothing changes.
func TestEveryMoveOfBothPolicies(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		sla := map[string]time.Duration{DangSoanThao: 168, ChoDuAn: 72, ChoYKienPhongBan: 72, ChoCCMKiemTra: 48, ChoCEODuyetNCC: 72}
		for _, policy := range []string{"A", "B"} {
			for _, m := range designMoves(policy) {
				t.Run(policy+" "+m.from+"→"+m.to, func(t *testing.T) {
					at := func(token string) evaluation {
						v := e.drive(t, e.readyBy(t, token, policy), m.from)
						if m.from == ChoYKienPhongBan && m.to == ChoCCMKiemTra {
							for _, k := range []string{"PRO", "CCM", "FIN"} {
								if st, b := e.raw("PUT", base+"/"+v.ID+"/opinions/"+k, e.admin, map[string]any{"verdict": "Agree"}); st != 200 {
									t.Fatalf("opinion: %d %s", st, b)
								}
							}
						}
						return v
					}
					// Refused: every other role, on one evaluation that stays put.
					v := at(e.token("Procurement"))
					for _, role := range roles {
						if slices.Contains(m.roles, role) {
							continue
						}
						r := e.move(e.token(role), v.ID, m.to, "Lý do.")
						code := "transition_forbidden"
						visible := role == "Procurement" || (slices.Contains(canRead, role) && slices.Contains(inboxOf(policy, m.from), role))
						if !visible {
							code = "forbidden"
						}
						testkit.WantProblem(t, r, 403, code)
					}
					if now := e.get(t, e.admin, v.ID); now.Phase != m.from || now.Version != v.Version || len(now.History) != len(v.History) {
						t.Fatalf("refused moves changed it: %s v%d", now.Phase, now.Version)
					}
					// Allowed: each role and Admin, each on its own evaluation.
					for _, role := range append(slices.Clone(m.roles), "Admin") {
						owner := e.token("Procurement")
						if role == "Drafter" {
							owner = e.token("Drafter")
						}
						v := at(owner)
						moved := e.mustMove(t, e.token(role), v.ID, m.to, "Lý do của "+role+".")
						last := moved.History[len(moved.History)-1]
						wantDecision := map[string]string{"forward": "Approve", "return": "Return", "reject": "Reject"}[m.kind]
						if last.FromPhase != m.from || last.ToPhase != m.to || last.Decision != wantDecision || last.ApproverName == nil || *last.ApproverName == "" {
							t.Errorf("%s: history %+v", role, last)
						}
						if h, ok := sla[m.to]; ok {
							if moved.SLADeadline == nil || !moved.SLADeadline.Equal(e.app.Clock.Now().Add(h*time.Hour).UTC().Truncate(time.Microsecond)) {
								t.Errorf("%s: deadline %v", role, moved.SLADeadline)
							}
						} else if moved.SLADeadline != nil || len(moved.AllowedTransitions) != 0 {
							t.Errorf("%s: terminal %s has deadline %v and moves %v", role, m.to, moved.SLADeadline, moved.allowed())
						}
					}
				})
			}
		}
	})
}

// inboxOf is the inbox roles of a phase in the default definitions.
func inboxOf(policy, phase string) []string {
	return map[string][]string{DangSoanThao: {"Procurement"}, ChoDuAn: {"ProjectManager"},
		ChoYKienPhongBan: {"Procurement", "CostControl", "Finance", "Accounting", "Equipment"}, ChoCCMKiemTra: {"CostControl"},
		ChoCEODuyetNCC: {"Director"}}[phase]
}

// Moves that do not exist, returns without a comment, and submitting
// what is not ready are refused and write nothing.
func TestRefusedMoves(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		proc := e.token("Procurement")
		// Submitting needs a winner and enough quotations.
		v := e.create(t, proc, map[string]any{"policy": "B"})
		testkit.WantProblem(t, e.move(proc, v.ID, ChoDuAn, ""), 400, "validation_failed", "Quotations", "SelectedQuotationId")
		v = e.quote(t, proc, v.ID, e.suppliers[0], 100)
		r := e.do("POST", base+"/"+v.ID+"/select-winner", proc, map[string]any{"quotationId": v.Quotations[0].ID})
		if r.Status != 200 {
			t.Fatal(r.Status)
		}
		testkit.WantProblem(t, e.move(proc, v.ID, ChoDuAn, ""), 400, "validation_failed", "Quotations")
		v = e.quote(t, proc, v.ID, e.suppliers[1], 200)
		v = e.quote(t, proc, v.ID, e.suppliers[2], 50) // now the chosen one is not the cheapest
		testkit.WantProblem(t, e.move(proc, v.ID, ChoDuAn, ""), 400, "validation_failed", "SelectionReason")
		if now := e.get(t, proc, v.ID); now.Phase != DangSoanThao || len(now.History) != 0 {
			t.Fatalf("refused submits moved it: %s", now.Phase)
		}
		r = e.do("POST", base+"/"+v.ID+"/select-winner", proc, map[string]any{"quotationId": v.Quotations[1].ID, "reason": "Chất lượng tốt hơn."})
		if r.Status != 200 {
			t.Fatal(r.Status)
		}
		e.mustMove(t, proc, v.ID, ChoDuAn, "")

		a := e.drive(t, e.ready(t, "A"), ChoDuAn)
		pm := e.token("ProjectManager")
		testkit.WantProblem(t, e.move(pm, a.ID, ChoYKienPhongBan, ""), 409, "invalid_transition") // not in policy A
		testkit.WantProblem(t, e.move(e.admin, a.ID, DaDuyet, ""), 409, "invalid_transition")     // skipping a step, even Admin
		testkit.WantProblem(t, e.move(pm, a.ID, "Nowhere", ""), 400, "validation_failed", "ToPhase")
		testkit.WantProblem(t, e.move(pm, a.ID, DangSoanThao, "  "), 400, "validation_failed", "Comment")
		testkit.WantProblem(t, e.move(pm, a.ID, TuChoi, ""), 400, "validation_failed", "Comment")
		testkit.WantProblem(t, e.do("POST", base+"/"+a.ID+"/transitions", pm, map[string]any{"toPhase": ChoCEODuyetNCC, "version": a.Version - 1}), 409, "stale_version")
		testkit.WantProblem(t, e.do("POST", base+"/"+a.ID+"/transitions", pm, `{"toPhase":`), 400, "validation_failed", "Body")
		testkit.WantProblem(t, e.do("POST", base+"/"+a.ID+"/transitions", pm, map[string]any{"toPhase": 3}), 400, "validation_failed", "ToPhase")
		if now := e.get(t, e.admin, a.ID); now.Phase != ChoDuAn || len(now.History) != 1 {
			t.Errorf("refused moves changed it: %s, %d history rows", now.Phase, len(now.History))
		}
		// A returned evaluation is a draft again: editable, and submitted anew.
		e.mustMove(t, pm, a.ID, DangSoanThao, "Bổ sung báo giá.")
		if r := e.do("PUT", base+"/"+a.ID, proc, e.body(map[string]any{"title": "Sửa sau khi trả lại"})); r.Status != 200 {
			t.Errorf("edit after return: %d %s", r.Status, r.Body)
		}
		e.mustMove(t, proc, a.ID, ChoDuAn, "")
	})
}

// Policy B's opinions: only by a holder of the kind's role or Admin, only
// in ChoYKienPhongBan, one per kind (saving again updates); Procurement
// moves on only with PRO, CCM and FIN saved.
func TestOpinionQuorum(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		var saved []string
		e.app.Kernel.App().Bus.Subscribe("purchaseEvaluation.opinionSaved", events.AfterCommit, func(_ context.Context, ev events.Event) error {
			mu.Lock()
			defer mu.Unlock()
			saved = append(saved, ev.Topic())
			return nil
		})
		v := e.ready(t, "B")
		testkit.WantProblem(t, e.opinion(e.token("Procurement"), v.ID, "PRO", "Agree"), 409, "not_editable") // still a draft
		v = e.drive(t, v, ChoYKienPhongBan)
		proc := e.token("Procurement")
		// Every opinion role has it in its inbox and may read it.
		for _, role := range []string{"Procurement", "CostControl", "Finance", "Accounting", "Equipment"} {
			if p := e.list(t, e.token(role), "/inbox"); !slices.Contains(p.ids(), v.ID) {
				t.Errorf("%s's inbox lacks it", role)
			}
		}
		if e.get(t, e.token("Finance"), v.ID).RequiredOpinions == nil {
			t.Error("no required opinions")
		}
		testkit.WantProblem(t, e.move(proc, v.ID, ChoCCMKiemTra, ""), 409, "opinions_missing")
		// The wrong role, an unknown kind, a bad verdict.
		testkit.WantProblem(t, e.opinion(e.token("Finance"), v.ID, "CCM", "Agree"), 403, "forbidden")
		testkit.WantProblem(t, e.opinion(e.token("Procurement"), v.ID, "FIN", "Agree"), 403, "forbidden")
		testkit.WantProblem(t, e.opinion(e.token("Finance"), v.ID, "XYZ", "Agree"), 400, "validation_failed", "Kind")
		testkit.WantProblem(t, e.opinion(e.token("Finance"), v.ID, "FIN", "Maybe"), 400, "validation_failed", "Verdict")
		testkit.WantProblem(t, e.do("PUT", base+"/"+v.ID+"/opinions/FIN", e.token("Finance"), map[string]any{"comment": "x"}), 400, "validation_failed", "Verdict")
		testkit.WantProblem(t, e.opinion(e.token("Director"), v.ID, "FIN", "Agree"), 403, "forbidden") // cannot even see it
		if n := e.count(t, "SELECT COUNT(*) FROM pe_dept_opinions WHERE evaluation_id = ?", v.ID); n != 0 {
			t.Fatalf("%d opinions written by refused calls", n)
		}
		for _, s := range []struct{ role, kind string }{{"Procurement", "PRO"}, {"CostControl", "CCM"}, {"Accounting", "ACT"}} {
			if r := e.opinion(e.token(s.role), v.ID, s.kind, "Disagree"); r.Status != 200 {
				t.Fatalf("%s opinion: %d %s", s.kind, r.Status, r.Body)
			}
		}
		r := e.move(proc, v.ID, ChoCCMKiemTra, "")
		testkit.WantProblem(t, r, 409, "opinions_missing")
		if p := r.Problem(t); !strings.Contains(p.Detail, "FIN") || strings.Contains(p.Detail, "CCM") {
			t.Errorf("detail %q should name FIN only", p.Detail)
		}
		// Saving again updates the one row of the kind.
		r = e.opinion(e.token("CostControl"), v.ID, "CCM", "AgreeWithConditions")
		var got evaluation
		r.JSON(t, &got)
		ccm := 0
		for _, o := range got.Opinions {
			if o.Kind == "CCM" {
				ccm++
				if o.Verdict != "AgreeWithConditions" || o.UserID != e.users["CostControl"].id || o.UserName == "" {
					t.Errorf("CCM opinion %+v", o)
				}
			}
		}
		if ccm != 1 || e.count(t, "SELECT COUNT(*) FROM pe_dept_opinions WHERE evaluation_id = ? AND kind = 'CCM'", v.ID) != 1 {
			t.Errorf("%d CCM opinions", ccm)
		}
		if r := e.opinion(e.admin, v.ID, "FIN", "Agree"); r.Status != 200 { // Admin may give any
			t.Fatalf("Admin's FIN: %d %s", r.Status, r.Body)
		}
		// Only Procurement moves it on, now that the quorum is there.
		testkit.WantProblem(t, e.move(e.token("CostControl"), v.ID, ChoCCMKiemTra, ""), 403, "transition_forbidden")
		e.mustMove(t, proc, v.ID, ChoCCMKiemTra, "")
		testkit.WantProblem(t, e.opinion(e.token("Finance"), v.ID, "FIN", "Agree"), 403, "forbidden") // no longer in Finance's view
		testkit.WantProblem(t, e.opinion(e.admin, v.ID, "FIN", "Agree"), 409, "not_editable")
		mu.Lock()
		defer mu.Unlock()
		if len(saved) != 5 {
			t.Errorf("%d opinionSaved events, want 5", len(saved))
		}
	})
}

// Of concurrent moves of one evaluation exactly one wins; the SLA job
// advances evaluations too; a full policy B run keeps its audit chain.
func TestConcurrencySLAAndAudit(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		var moved []string
		e.app.Kernel.App().Bus.Subscribe("purchaseEvaluation.transitioned", events.AfterCommit, func(_ context.Context, ev events.Event) error {
			mu.Lock()
			defer mu.Unlock()
			b, _ := json.Marshal(ev)
			moved = append(moved, string(b))
			return nil
		})
		t.Run("concurrent moves", func(t *testing.T) {
			v := e.drive(t, e.ready(t, "A"), ChoDuAn)
			var wg sync.WaitGroup
			var mu sync.Mutex
			statuses := map[int]int{}
			for range 10 {
				to := ChoCEODuyetNCC
				wg.Go(func() {
					// As Admin, who still sees it once it has moved: the losers
					// meet the compare-and-set, not the visibility rule.
					st, _ := e.raw("POST", base+"/"+v.ID+"/transitions", e.admin, map[string]any{"toPhase": to, "comment": "Đua."})
					mu.Lock()
					statuses[st]++
					mu.Unlock()
				})
			}
			wg.Wait()
			if statuses[200] != 1 || statuses[409] != 9 {
				t.Errorf("statuses %v", statuses)
			}
			if n := e.count(t, "SELECT COUNT(*) FROM purchase_evaluation_history WHERE evaluation_id = ?", v.ID); n != 2 {
				t.Errorf("%d history rows", n)
			}
		})
		t.Run("SLA job", func(t *testing.T) {
			v := e.drive(t, e.ready(t, "A"), ChoDuAn)
			e.app.Clock.Advance(73 * time.Hour)
			e.runSLA(t)
			now := e.get(t, e.admin, v.ID)
			last := now.History[len(now.History)-1]
			if now.Phase != ChoCEODuyetNCC || last.Decision != "AutoApprove" || last.ApproverUserID != nil || !strings.Contains(last.Comment, ChoDuAn) {
				t.Errorf("after the SLA job: %s, %+v", now.Phase, last)
			}
		})
		t.Run("SLA job and the opinion quorum", func(t *testing.T) {
			// The job's moves read the precondition for themselves (a
			// transition's request holds it already): without the quorum
			// the evaluation waits; with it, the job moves it on.
			v := e.drive(t, e.ready(t, "B"), ChoYKienPhongBan)
			e.app.Clock.Advance(73 * time.Hour)
			e.runSLA(t)
			if now := e.get(t, e.admin, v.ID); now.Phase != ChoYKienPhongBan {
				t.Fatalf("without the opinions the SLA job moved it to %s", now.Phase)
			}
			for _, k := range []string{"PRO", "CCM", "FIN"} { // the default quorum
				if r := e.opinion(e.admin, v.ID, k, "Agree"); r.Status != 200 {
					t.Fatalf("opinion %s: %d %s", k, r.Status, r.Body)
				}
			}
			e.runSLA(t)
			if now := e.get(t, e.admin, v.ID); now.Phase != ChoCCMKiemTra || now.History[len(now.History)-1].Decision != "AutoApprove" {
				t.Errorf("with the opinions, after the SLA job: %s, %+v", now.Phase, now.History[len(now.History)-1])
			}
		})
		t.Run("audit verify after policy B", func(t *testing.T) {
			v := e.drive(t, e.ready(t, "B"), DaDuyet)
			if len(v.History) != 5 || v.ApprovedAt == nil {
				t.Errorf("approved with %d history rows, approvedAt %v", len(v.History), v.ApprovedAt)
			}
			for _, c := range e.app.Kernel.Commands() {
				if c.Name != "audit verify" {
					continue
				}
				var out bytes.Buffer
				if err := c.Run(context.Background(), e.app.Kernel.App(), nil, &out); err != nil {
					t.Fatalf("audit verify: %v\n%s", err, out.String())
				}
				if !strings.Contains(out.String(), "purchaseEvaluation:") {
					t.Errorf("audit output %s", out.String())
				}
				e.exec(t, "UPDATE purchase_evaluation_history SET comment = 'sửa' WHERE evaluation_id = ? AND to_phase = ?", v.ID, DaDuyet)
				if err := c.Run(context.Background(), e.app.Kernel.App(), nil, &out); err == nil || !strings.Contains(err.Error(), v.ID) {
					t.Errorf("a changed row passed: %v", err)
				}
				return
			}
			t.Fatal("no audit verify command")
		})
		mu.Lock()
		defer mu.Unlock()
		if len(moved) == 0 || !strings.Contains(moved[0], `"MaPhieu":"PE/2026/`) {
			t.Errorf("transitioned events %v", moved)
		}
	})
}

// TestSubmitRacesQuotationDeletion races the submission of a policy B
// evaluation holding exactly the three quotations it needs against the
// deletion of one of them. The precondition reads the quotations under the
// evaluation's lock, which the deletion takes too, so one of the two goes
// first and the other is refused: the evaluation never leaves
// DangSoanThao with two quotations.
func TestSubmitRacesQuotationDeletion(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		token := e.token("Procurement")
		for range 8 {
			v := e.ready(t, "B")
			var moved, deleted int
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				moved, _ = e.raw("POST", base+"/"+v.ID+"/transitions", token, map[string]any{"toPhase": "ChoDuAn"})
			}()
			go func() {
				defer wg.Done()
				deleted, _ = e.raw("DELETE", base+"/"+v.ID+"/quotations/"+v.Quotations[2].ID, token, nil)
			}()
			wg.Wait()
			got := e.get(t, token, v.ID)
			switch {
			case moved == 200 && deleted == 409:
				if got.Phase != "ChoDuAn" || len(got.Quotations) != 3 {
					t.Fatalf("submitted first: phase %s with %d quotations", got.Phase, len(got.Quotations))
				}
			case moved == 400 && deleted == 204:
				if got.Phase != "DangSoanThao" || len(got.Quotations) != 2 {
					t.Fatalf("deleted first: phase %s with %d quotations", got.Phase, len(got.Quotations))
				}
			default:
				t.Fatalf("submission %d, deletion %d: one of them must go first and the other be refused (phase %s, %d quotations)",
					moved, deleted, got.Phase, len(got.Quotations))
			}
		}
	})
}
