package contracts_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

// comment for the moves that need one.
func commentFor(kind string) string {
	if kind == "return" || kind == "reject" {
		return "Lý do: " + kind
	}
	return ""
}

func decisionFor(kind string) string {
	return map[string]string{"forward": "Approve", "bypass": "Approve", "return": "Return", "reject": "Reject"}[kind]
}

// TestTransitionMatrix runs every one of the 12 pairs over HTTP by each
// role allowed for it, and by users who see the contract but may not make
// that move: its drafter holding Drafter (for the pairs Drafter may not
// make), the same drafter once they hold only Equipment (no pair allows
// it), and Finance in DangGopY.
func TestTransitionMatrix(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		roleUsers := map[string]user{}
		for _, r := range []string{"Drafter", "DeptManager", "ProjectManager", "CostControl", "Director", "AuthorizedSigner", "HrAdmin", "Finance"} {
			roleUsers[r] = e.user(t, r)
		}
		drafter := e.user(t, "Drafter")
		type job struct {
			m    designMove
			role string
			c    contract
		}
		var jobs []job
		for _, m := range designMoves {
			for _, role := range m.roles {
				c := e.create(t, drafter.token, map[string]any{"bypassProcurementAndCCM": m.guard != ""})
				e.drive(t, c.ID, m.from)
				jobs = append(jobs, job{m, role, c})
			}
		}
		if len(jobs) != 19 {
			t.Fatalf("%d allowed (pair, role) combinations, want 19", len(jobs))
		}
		name := func(j job) string { return fmt.Sprintf("%s→%s", j.m.from, j.m.to) }

		t.Run("drafter holding Drafter", func(t *testing.T) {
			for _, j := range jobs {
				if slices.Contains(j.m.roles, "Drafter") {
					continue
				}
				testkit.WantProblem(t, e.move(drafter.token, j.c.ID, j.m.to, commentFor(j.m.kind)), 403, "transition_forbidden")
			}
		})
		t.Run("Finance in DangGopY", func(t *testing.T) {
			for _, j := range jobs {
				if j.m.from == DangGopY {
					testkit.WantProblem(t, e.move(roleUsers["Finance"].token, j.c.ID, j.m.to, commentFor(j.m.kind)), 403, "transition_forbidden")
				}
			}
		})
		e.setRoles(t, &drafter, "Equipment")
		t.Run("drafter holding only Equipment", func(t *testing.T) {
			for _, j := range jobs {
				r := e.move(drafter.token, j.c.ID, j.m.to, commentFor(j.m.kind))
				if r.Status != 403 || r.Problem(t).Code != "transition_forbidden" {
					t.Errorf("%s: %d %s, want 403 transition_forbidden", name(j), r.Status, r.Body)
				}
			}
		})
		if n := e.count(t, "SELECT COUNT(*) FROM contract_approvals WHERE approver_user_id = ?", drafter.id); n != 0 {
			t.Fatalf("refused moves wrote %d approval rows", n)
		}
		for _, j := range jobs {
			t.Run(fmt.Sprintf("%02d %s by %s", slices.IndexFunc(designMoves, func(m designMove) bool { return m.from == j.m.from && m.to == j.m.to })+1, name(j), j.role), func(t *testing.T) {
				u := roleUsers[j.role]
				before := e.get(t, e.admin, j.c.ID)
				got := e.mustMove(t, u.token, j.c.ID, j.m.to, commentFor(j.m.kind))
				if len(got.Approvals) != len(before.Approvals)+1 {
					t.Fatalf("%d approvals, want %d", len(got.Approvals), len(before.Approvals)+1)
				}
				a := got.Approvals[len(got.Approvals)-1]
				if a.FromPhase != j.m.from || a.ToPhase != j.m.to || a.Decision != decisionFor(j.m.kind) || a.Comment != commentFor(j.m.kind) ||
					a.ApproverUserID == nil || *a.ApproverUserID != u.id || a.ApproverName == nil || *a.ApproverName != u.name {
					t.Fatalf("approval %+v", a)
				}
				if got.Version != before.Version+1 {
					t.Errorf("version %d, want %d", got.Version, before.Version+1)
				}
				if h, ok := slaHours[j.m.to]; ok {
					wantDeadline(t, got, e.app.Clock.Now().Add(time.Duration(h)*time.Hour))
				} else if got.SLADeadline != nil {
					t.Errorf("terminal %s has deadline %v", j.m.to, got.SLADeadline)
				}
			})
		}
	})
}

// TestFullRun: the seven moves of the normal path, each by a user holding
// the role DESIGN §4 names, give seven approval rows and a contract code;
// every move resets the deadline to now plus the new phase's SLA.
func TestFullRun(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		steps := []struct {
			to   string
			user user
		}{
			{DangDamPhan, drafter},
			{DangGopY, drafter},
			{DangInKy, e.user(t, "ProjectManager")},
			{DangKiemTraCCM, e.user(t, "DeptManager")},
			{DangTrinhKy, e.user(t, "CostControl")},
			{DangDongDau, e.user(t, "Director")},
			{DaPhatHanh, e.user(t, "HrAdmin")},
		}
		c := e.create(t, drafter.token, nil)
		from := DangSoanThao
		for i, st := range steps {
			e.app.Clock.Advance(time.Duration(i+1) * time.Hour)
			now := e.app.Clock.Now()
			got := e.mustMove(t, st.user.token, c.ID, st.to, "")
			if st.to != DaPhatHanh {
				wantDeadline(t, got, now.Add(time.Duration(slaHours[st.to])*time.Hour))
			} else if got.SLADeadline != nil {
				t.Fatalf("published contract has deadline %v", got.SLADeadline)
			}
			a := got.Approvals[i]
			if len(got.Approvals) != i+1 || a.FromPhase != from || a.ToPhase != st.to || a.Decision != "Approve" ||
				*a.ApproverUserID != st.user.id || *a.ApproverName != st.user.name || !a.ApprovedAt.Equal(now) {
				t.Fatalf("move %d: approvals %+v", i+1, got.Approvals)
			}
			if got.Version != i+2 {
				t.Fatalf("version %d after %d moves", got.Version, i+1)
			}
			if (st.to == DangDongDau || st.to == DaPhatHanh) != (got.MaHopDong != nil) {
				t.Fatalf("code %v after entering %s", got.MaHopDong, st.to)
			}
			from = st.to
		}
		got := e.get(t, e.admin, c.ID)
		if got.Phase != DaPhatHanh || len(got.Approvals) != 7 || got.code() != "DA001-HDTP-001" || len(got.AllowedTransitions) != 0 {
			t.Fatalf("after the run: phase %s, %d approvals, code %q, allowed %v", got.Phase, len(got.Approvals), got.code(), got.allowed())
		}
		if n := e.count(t, "SELECT COUNT(*) FROM contract_approvals WHERE contract_id = ?", c.ID); n != 7 {
			t.Fatalf("%d approval rows", n)
		}
	})
}

// TestTransitionRefusals: moves outside the 12 pairs (Admin too), unknown
// phases, missing comments, stale versions and the bypass move without its
// flag are refused and write nothing.
func TestTransitionRefusals(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		signer := e.user(t, "Director")
		draft := e.create(t, drafter.token, nil)
		negotiating := e.create(t, drafter.token, nil)
		e.drive(t, negotiating.ID, DangDamPhan)
		printing := e.create(t, drafter.token, nil)
		e.drive(t, printing.ID, DangInKy)
		signing := e.create(t, drafter.token, nil)
		e.drive(t, signing.ID, DangTrinhKy)
		published := e.create(t, drafter.token, nil)
		e.drive(t, published.ID, DaPhatHanh)
		rejected := e.create(t, drafter.token, nil)
		e.drive(t, rejected.ID, TuChoi)
		approvals := e.count(t, "SELECT COUNT(*) FROM contract_approvals")

		mv := func(name, token, id string, body any, status int, code string, fields ...string) testkit.Scenario {
			return testkit.Scenario{Name: name, Request: testkit.Request{Method: "POST", Path: "/api/contracts/" + id + "/transitions", Token: token, Body: body},
				Status: status, Code: code, Fields: fields}
		}
		to := func(phase string) map[string]any { return map[string]any{"toPhase": phase} }
		e.app.Run(t, []testkit.Scenario{
			mv("admin skips to the end", e.admin, draft.ID, to(DaPhatHanh), 409, "invalid_transition"),
			mv("admin skips a phase", e.admin, draft.ID, to(DangGopY), 409, "invalid_transition"),
			mv("admin stays put", e.admin, draft.ID, to(DangSoanThao), 409, "invalid_transition"),
			mv("admin rejects a draft", e.admin, draft.ID, map[string]any{"toPhase": TuChoi, "comment": "x"}, 409, "invalid_transition"),
			mv("drafter skips a phase", drafter.token, draft.ID, to(DangInKy), 409, "invalid_transition"),
			mv("unknown phase", e.admin, draft.ID, to("DangNgu"), 400, "validation_failed", "ToPhase"),
			mv("phase in the wrong case", e.admin, draft.ID, to("dangdamphan"), 400, "validation_failed", "ToPhase"),
			mv("phase as a number", e.admin, draft.ID, map[string]any{"toPhase": 2}, 400, "validation_failed", "ToPhase"),
			mv("phase missing", e.admin, draft.ID, map[string]any{"comment": "x"}, 400, "validation_failed", "ToPhase"),
			mv("comment too long", e.admin, draft.ID, map[string]any{"toPhase": DangDamPhan, "comment": strings.Repeat("x", 4001)}, 400, "validation_failed", "Comment"),
			mv("malformed JSON", e.admin, draft.ID, `{"toPhase":`, 400, "validation_failed", "Body"),
			mv("stale version", drafter.token, draft.ID, map[string]any{"toPhase": DangDamPhan, "version": 7}, 409, "stale_version"),
			mv("version a string", drafter.token, draft.ID, map[string]any{"toPhase": DangDamPhan, "version": "1"}, 400, "validation_failed", "Version"),
			mv("unknown contract", e.admin, "0190f5f2-7a3b-7c4d-8e5f-000000000001", to(DangDamPhan), 404, "not_found"),
			mv("return without comment", drafter.token, negotiating.ID, to(DangSoanThao), 400, "validation_failed", "Comment"),
			mv("return with a blank comment", e.admin, negotiating.ID, map[string]any{"toPhase": DangSoanThao, "comment": " \n\t "}, 400, "validation_failed", "Comment"),
			mv("reject without comment", signer.token, signing.ID, to(TuChoi), 400, "validation_failed", "Comment"),
			mv("admin rejects without comment", e.admin, signing.ID, to(TuChoi), 400, "validation_failed", "Comment"),
			mv("bypass without the flag", drafter.token, printing.ID, to(DangTrinhKy), 409, "invalid_transition"),
			mv("admin bypass without the flag", e.admin, printing.ID, to(DangTrinhKy), 409, "invalid_transition"),
			mv("move out of DaPhatHanh", e.admin, published.ID, to(DangDongDau), 409, "invalid_transition"),
			mv("reopen a rejected contract", e.admin, rejected.ID, map[string]any{"toPhase": DangSoanThao, "comment": "x"}, 409, "invalid_transition"),
		})
		if n := e.count(t, "SELECT COUNT(*) FROM contract_approvals"); n != approvals {
			t.Fatalf("refused moves wrote %d approval rows", n-approvals)
		}
		for id, phase := range map[string]string{draft.ID: DangSoanThao, negotiating.ID: DangDamPhan, printing.ID: DangInKy,
			signing.ID: DangTrinhKy, published.ID: DaPhatHanh, rejected.ID: TuChoi} {
			if got := e.get(t, e.admin, id); got.Phase != phase {
				t.Errorf("%s moved to %s by a refused request", phase, got.Phase)
			}
		}
		// The current version is accepted.
		cur := e.get(t, drafter.token, draft.ID)
		r := e.do("POST", "/api/contracts/"+draft.ID+"/transitions", drafter.token, map[string]any{"toPhase": DangDamPhan, "version": cur.Version})
		if r.Status != 200 {
			t.Fatalf("move with the current version: %d %s", r.Status, r.Body)
		}
	})
}

// TestReturnsRejectAndBypass walks the return moves (9, 10, 11), the bypass
// (8) and the rejection (12), each with its comment and decision.
func TestReturnsRejectAndBypass(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "DeptManager")
		pm := e.user(t, "ProjectManager")
		ccm := e.user(t, "CostControl")
		signer := e.user(t, "AuthorizedSigner")
		c := e.create(t, drafter.token, nil)
		type step struct {
			u        user
			to       string
			comment  string
			decision string
		}
		for i, st := range []step{
			{drafter, DangDamPhan, "", "Approve"},
			{drafter, DangSoanThao, "Thiếu phụ lục", "Return"},
			{drafter, DangDamPhan, "", "Approve"},
			{drafter, DangGopY, "", "Approve"},
			{pm, DangDamPhan, "Giá chưa hợp lý", "Return"},
			{drafter, DangGopY, "", "Approve"},
			{pm, DangInKy, "", "Approve"},
			{drafter, DangKiemTraCCM, "", "Approve"},
			{ccm, DangInKy, "Sai định mức", "Return"},
			{drafter, DangKiemTraCCM, "Đã sửa", "Approve"},
			{ccm, DangTrinhKy, "", "Approve"},
			{signer, TuChoi, "Không ký", "Reject"},
		} {
			e.app.Clock.Advance(30 * time.Minute)
			got := e.mustMove(t, st.u.token, c.ID, st.to, st.comment)
			a := got.Approvals[len(got.Approvals)-1]
			if len(got.Approvals) != i+1 || a.ToPhase != st.to || a.Decision != st.decision || a.Comment != st.comment || *a.ApproverUserID != st.u.id {
				t.Fatalf("step %d: %+v", i+1, a)
			}
			if h, ok := slaHours[st.to]; ok {
				wantDeadline(t, got, e.app.Clock.Now().Add(time.Duration(h)*time.Hour))
			}
		}
		got := e.get(t, e.admin, c.ID)
		if got.Phase != TuChoi || got.SLADeadline != nil || len(got.AllowedTransitions) != 0 || got.MaHopDong != nil {
			t.Fatalf("rejected contract %+v", got)
		}

		t.Run("bypass", func(t *testing.T) {
			c := e.create(t, drafter.token, map[string]any{"bypassProcurementAndCCM": true})
			e.drive(t, c.ID, DangInKy)
			if got := e.get(t, drafter.token, c.ID).allowed(); !slices.Equal(got, []string{DangKiemTraCCM, DangTrinhKy}) {
				t.Fatalf("allowed %v", got)
			}
			// The project manager no longer sees it, let alone moves it.
			testkit.WantProblem(t, e.move(pm.token, c.ID, DangTrinhKy, ""), 403, "forbidden")
			got := e.mustMove(t, drafter.token, c.ID, DangTrinhKy, "")
			a := got.Approvals[len(got.Approvals)-1]
			if a.FromPhase != DangInKy || a.Decision != "Approve" {
				t.Fatalf("approval %+v", a)
			}
			wantDeadline(t, got, e.app.Clock.Now().Add(72*time.Hour))
			for _, ap := range got.Approvals {
				if ap.ToPhase == DangKiemTraCCM {
					t.Fatal("the bypass went through DangKiemTraCCM")
				}
			}
		})
		t.Run("the flag set while drafting opens the bypass", func(t *testing.T) {
			c := e.create(t, drafter.token, nil)
			r := e.do("PUT", "/api/contracts/"+c.ID, drafter.token, e.body(map[string]any{"title": c.Title, "bypassProcurementAndCCM": true}))
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			e.drive(t, c.ID, DangInKy)
			e.mustMove(t, drafter.token, c.ID, DangTrinhKy, "")
		})
	})
}

// TestConcurrentMoves: of many simultaneous moves from one phase exactly
// one wins; the others get 409 and write nothing.
func TestConcurrentMoves(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		t.Run("20 identical moves", func(t *testing.T) {
			c := e.create(t, drafter.token, nil)
			statuses := e.parallel(20, func(i int) *testkit.Response {
				token := e.admin
				if i%2 == 1 {
					token = drafter.token
				}
				return e.move(token, c.ID, DangDamPhan, "")
			})
			if statuses["200"] != 1 || statuses["409 invalid_transition"] != 19 {
				t.Fatalf("statuses %v, want one 200 and nineteen 409", statuses)
			}
			got := e.get(t, e.admin, c.ID)
			if got.Phase != DangDamPhan || len(got.Approvals) != 1 || got.Version != 2 {
				t.Fatalf("phase %s, %d approvals, version %d", got.Phase, len(got.Approvals), got.Version)
			}
		})
		t.Run("publish against reject", func(t *testing.T) {
			c := e.create(t, drafter.token, nil)
			e.drive(t, c.ID, DangTrinhKy)
			statuses := e.parallel(10, func(i int) *testkit.Response {
				if i%2 == 0 {
					return e.move(e.admin, c.ID, DangDongDau, "")
				}
				return e.move(e.admin, c.ID, TuChoi, "Không ký")
			})
			if statuses["200"] != 1 || statuses["409 invalid_transition"] != 9 {
				t.Fatalf("statuses %v", statuses)
			}
			got := e.get(t, e.admin, c.ID)
			if n := e.count(t, "SELECT COUNT(*) FROM contract_approvals WHERE contract_id = ? AND from_phase = ?", c.ID, DangTrinhKy); n != 1 {
				t.Fatalf("%d approvals out of DangTrinhKy", n)
			}
			if (got.Phase == DangDongDau) != (got.MaHopDong != nil) {
				t.Fatalf("phase %s with code %v", got.Phase, got.MaHopDong)
			}
			// A losing publication left no gap in the counter.
			if got.Phase == DangDongDau {
				if n := e.count(t, "SELECT last_seq FROM contract_code_sequences WHERE prefix = 'DA001-HDTP'"); n != 1 {
					t.Fatalf("counter at %d after one publication", n)
				}
			}
		})
	})
}

// parallel runs n requests at once and counts the answers by status and
// problem code ("200", "409 invalid_transition").
func (e *env) parallel(n int, req func(i int) *testkit.Response) map[string]int {
	var mu sync.Mutex
	statuses := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := req(i)
			key := fmt.Sprint(r.Status)
			var p struct{ Code string }
			if r.Status >= 400 && json.Unmarshal(r.Body, &p) == nil {
				key += " " + p.Code
			}
			mu.Lock()
			statuses[key]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return statuses
}
