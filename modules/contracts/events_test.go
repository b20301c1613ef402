package contracts_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestEvents: moves, drafts, comments and deletions are published for other
// modules, after commit for side effects.
func TestEvents(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		moved := record[contracts.Transitioned](e, contracts.TopicTransitioned)
		created := record[contracts.Created](e, contracts.TopicCreated)
		commented := record[contracts.Commented](e, contracts.TopicCommented)
		deleted := record[contracts.Deleted](e, contracts.TopicDeleted)
		drafter := e.user(t, "Drafter")
		c := e.create(t, drafter.token, map[string]any{"value": 2500.5})
		if got := created.events(); len(got) != 1 || got[0].ContractID != c.ID || got[0].DrafterID != drafter.id || got[0].Value.String() != "2500.5" {
			t.Fatalf("created %+v", got)
		}
		e.mustMove(t, drafter.token, c.ID, DangDamPhan, "")
		got := moved.events()
		if len(got) != 1 {
			t.Fatalf("%d transition events", len(got))
		}
		ev := got[0]
		if ev.ContractID != c.ID || ev.From != DangSoanThao || ev.To != DangDamPhan || ev.Decision != "Approve" || ev.ActorID == nil ||
			*ev.ActorID != drafter.id || ev.DrafterID != drafter.id || !sameSet(ev.InboxRoles, []string{"Drafter", "DeptManager"}) ||
			ev.Title != c.Title || !ev.At.Equal(t0) || ev.MaHopDong != nil {
			t.Fatalf("transitioned %+v", ev)
		}
		e.do("POST", "/api/contracts/"+c.ID+"/comments", drafter.token, map[string]any{"content": "x"})
		if got := commented.events(); len(got) != 1 || got[0].ContractID != c.ID || got[0].Phase != DangDamPhan || got[0].AuthorID != drafter.id {
			t.Fatalf("commented %+v", got)
		}
		e.drive(t, c.ID, DangDongDau)
		if last := moved.events()[len(moved.events())-1]; last.To != DangDongDau || last.MaHopDong == nil || *last.MaHopDong != "DA001-HDTP-001" {
			t.Fatalf("the move into DangDongDau carries code %v", last.MaHopDong)
		}
		d := e.create(t, drafter.token, nil)
		e.do("DELETE", "/api/contracts/"+d.ID, drafter.token, nil)
		if got := deleted.events(); len(got) != 1 || got[0].ContractID != d.ID {
			t.Fatalf("deleted %+v", got)
		}
	})
}

// TestTransitionHook: a module that refuses a move from inside its
// transaction (the budget check) undoes all of it: phase, approval row,
// deadline and code counter.
func TestTransitionHook(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		refuse := map[string]bool{DangTrinhKy: true, DangDongDau: true}
		set := func(phase string, on bool) {
			mu.Lock()
			defer mu.Unlock()
			refuse[phase] = on
		}
		var seen []string
		e.app.Kernel.App().Bus.Subscribe(contracts.TopicTransitioned, events.InTx, func(_ context.Context, ev events.Event) error {
			tr := ev.(contracts.Transitioned)
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, tr.To)
			if refuse[tr.To] {
				return apperr.Conflict("budget_exceeded", "The budget line has too little left.")
			}
			return nil
		})
		after := record[contracts.Transitioned](e, contracts.TopicTransitioned)
		c := e.create(t, e.admin, nil)
		e.drive(t, c.ID, DangKiemTraCCM)
		before := e.get(t, e.admin, c.ID)
		testkit.WantProblem(t, e.move(e.admin, c.ID, DangTrinhKy, ""), 409, "budget_exceeded")
		got := e.get(t, e.admin, c.ID)
		if got.Phase != DangKiemTraCCM || len(got.Approvals) != len(before.Approvals) || got.Version != before.Version || !got.SLADeadline.Equal(*before.SLADeadline) {
			t.Fatalf("a refused move left traces: %+v", got)
		}
		if len(after.events()) != 4 {
			t.Fatalf("%d after-commit events, want the 4 accepted moves", len(after.events()))
		}

		// Refused on entering DangDongDau: the code and its number are not taken.
		set(DangTrinhKy, false)
		e.mustMove(t, e.admin, c.ID, DangTrinhKy, "")
		testkit.WantProblem(t, e.move(e.admin, c.ID, DangDongDau, ""), 409, "budget_exceeded")
		if got := e.get(t, e.admin, c.ID); got.MaHopDong != nil || got.Phase != DangTrinhKy {
			t.Fatalf("code %v, phase %s after a refused publication", got.MaHopDong, got.Phase)
		}
		set(DangDongDau, false)
		if got := e.mustMove(t, e.admin, c.ID, DangDongDau, ""); got.code() != "DA001-HDTP-001" {
			t.Fatalf("code %q: the refused publication used a number", got.code())
		}

		// The SLA job meets the same refusal: the contract is skipped, the others move.
		stuck := e.create(t, e.admin, nil)
		e.app.Clock.Advance(time.Hour)
		fine := e.create(t, e.admin, nil)
		e.drive(t, fine.ID, DangDamPhan)
		set(DangDamPhan, true)
		e.app.Clock.Advance(200 * time.Hour)
		e.runSLA(t)
		if got := e.get(t, e.admin, stuck.ID); got.Phase != DangSoanThao || len(got.Approvals) != 0 {
			t.Fatalf("refused auto move happened: %s", got.Phase)
		}
		if got := e.get(t, e.admin, fine.ID); got.Phase != DangGopY {
			t.Fatalf("the other contract did not move: %s", got.Phase)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(seen, DangGopY) {
			t.Fatal("hook did not see the system's move")
		}
	})
}
