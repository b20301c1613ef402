package contracts_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// publish drives a new contract to DangDongDau and returns its code.
func (e *env) publish(t testing.TB, over map[string]any) (contract, string) {
	t.Helper()
	c := e.create(t, e.admin, over)
	c = e.drive(t, c.ID, DangDongDau)
	return c, c.code()
}

// TestCodes: MaHopDong is generated on entering DangDongDau, counted per
// prefix: <projectCode>-<typeCode>-<seq> for project-bound types and
// <year in the business time zone>-<typeCode>-<seq> for framework types.
func TestCodes(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		da002 := e.masterdata(t, "/api/projects", map[string]any{"code": "DA002", "name": "Dự án Hai"})
		first, code := e.publish(t, nil)
		want := []struct {
			name string
			over map[string]any
			code string
		}{
			{"second of the same project and type", nil, "DA001-HDTP-002"},
			{"another project", map[string]any{"projectId": da002}, "DA002-HDTP-001"},
			{"another type", map[string]any{"contractType": "PieceWork"}, "DA001-HDGK-001"},
			{"supply", map[string]any{"contractType": "Supply"}, "DA001-NCC-001"},
			{"service", map[string]any{"contractType": "Service"}, "DA001-HDDV-001"},
			{"purchase", map[string]any{"contractType": "Purchase"}, "DA001-MB-001"},
			{"third of the first prefix", nil, "DA001-HDTP-003"},
			{"second of another project", map[string]any{"projectId": da002}, "DA002-HDTP-002"},
		}
		if code != "DA001-HDTP-001" {
			t.Fatalf("first code %q", code)
		}
		for _, w := range want {
			if _, got := e.publish(t, w.over); got != w.code {
				t.Errorf("%s: code %q, want %q", w.name, got, w.code)
			}
		}

		t.Run("kept to the end and generated once", func(t *testing.T) {
			got := e.drive(t, first.ID, DaPhatHanh)
			if got.code() != "DA001-HDTP-001" {
				t.Fatalf("code %q after publication", got.code())
			}
			if n := e.count(t, "SELECT last_seq FROM contract_code_sequences WHERE prefix = 'DA001-HDTP'"); n != 3 {
				t.Fatalf("counter %d, want 3", n)
			}
		})
		t.Run("never before DangDongDau, never for a rejection", func(t *testing.T) {
			c := e.create(t, e.admin, nil)
			for _, p := range []string{DangDamPhan, DangGopY, DangInKy, DangKiemTraCCM, DangTrinhKy} {
				if got := e.drive(t, c.ID, p); got.MaHopDong != nil {
					t.Fatalf("code %q in %s", got.code(), p)
				}
			}
			if got := e.mustMove(t, e.admin, c.ID, TuChoi, "Không ký"); got.MaHopDong != nil {
				t.Fatalf("rejected contract got code %q", got.code())
			}
		})
		t.Run("a code already set is kept", func(t *testing.T) {
			c := e.create(t, e.admin, nil)
			e.drive(t, c.ID, DangTrinhKy)
			e.exec(t, "UPDATE contracts SET ma_hop_dong = 'DA001-HDTP-777' WHERE id = ?", c.ID)
			if got := e.mustMove(t, e.admin, c.ID, DangDongDau, ""); got.code() != "DA001-HDTP-777" {
				t.Fatalf("code %q, want the one it had", got.code())
			}
			if _, got := e.publish(t, nil); got != "DA001-HDTP-004" {
				t.Fatalf("next code %q: the kept code consumed a number", got)
			}
		})
		t.Run("more than three digits", func(t *testing.T) {
			e.exec(t, "UPDATE contract_code_sequences SET last_seq = 999 WHERE prefix = 'DA001-HDTP'")
			if _, got := e.publish(t, nil); got != "DA001-HDTP-1000" {
				t.Fatalf("code %q", got)
			}
		})
		t.Run("framework types carry the business year", func(t *testing.T) {
			// 18:30 UTC on 31 December is already New Year in Asia/Ho_Chi_Minh.
			e.app.Clock.Set(time.Date(2026, 12, 31, 18, 30, 0, 0, time.UTC))
			for _, w := range []struct {
				over map[string]any
				code string
			}{
				{map[string]any{"contractType": "FrameworkSupply", "projectId": nil}, "2027-HDKNCC-001"},
				{map[string]any{"contractType": "FrameworkSubcontract", "projectId": nil}, "2027-HDKTP-001"},
				{map[string]any{"contractType": "FrameworkSupply"}, "2027-HDKNCC-002"}, // a project does not change the prefix
			} {
				if _, got := e.publish(t, w.over); got != w.code {
					t.Errorf("code %q, want %q", got, w.code)
				}
			}
			e.app.Clock.Set(time.Date(2026, 12, 31, 16, 59, 0, 0, time.UTC)) // 23:59 local
			if _, got := e.publish(t, map[string]any{"contractType": "FrameworkSupply", "projectId": nil}); got != "2026-HDKNCC-001" {
				t.Errorf("code %q, want 2026-HDKNCC-001", got)
			}
		})
		t.Run("search by code", func(t *testing.T) {
			l := e.list(t, e.admin, "?search=001-hdtp-002")
			if l.TotalCount != 1 || l.Items[0].code() != "DA001-HDTP-002" {
				t.Fatalf("search found %d: %+v", l.TotalCount, l.ids())
			}
		})
	})
}

// TestConcurrentCodes: fifty contracts of one prefix and ten of another
// published at once get distinct, consecutive codes.
func TestConcurrentCodes(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		da002 := e.masterdata(t, "/api/projects", map[string]any{"code": "DA002", "name": "Dự án Hai"})
		ids := e.createMany(t, 60, func(i int) map[string]any {
			over := map[string]any{}
			if i >= 50 {
				over["projectId"] = da002
			}
			return over
		})
		e.placeIn(t, ids, DangTrinhKy)
		codes := make([]string, len(ids))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := e.move(e.admin, id, DangDongDau, "")
				var c contract
				if r.Status != 200 || c.unmarshal(r.Body) != nil {
					t.Errorf("publish %s: %d %s", id, r.Status, r.Body)
					return
				}
				codes[i] = c.code()
			}()
		}
		close(start)
		wg.Wait()
		var want []string
		for i := 1; i <= 50; i++ {
			want = append(want, fmt.Sprintf("DA001-HDTP-%03d", i))
		}
		for i := 1; i <= 10; i++ {
			want = append(want, fmt.Sprintf("DA002-HDTP-%03d", i))
		}
		slices.Sort(codes)
		if !slices.Equal(codes, want) {
			t.Fatalf("codes %v, want %v", codes, want)
		}
		if n := e.count(t, "SELECT COUNT(DISTINCT ma_hop_dong) FROM contracts WHERE ma_hop_dong IS NOT NULL"); n != 60 {
			t.Fatalf("%d distinct codes stored", n)
		}
	})
}

// placeIn puts contracts straight into phase, with that phase's deadline,
// for tests about what happens next (publishing many at once): driving
// sixty contracts through four moves each over HTTP would be most of their
// run time, and the moves themselves are tested elsewhere.
func (e *env) placeIn(t testing.TB, ids []string, phase string) {
	t.Helper()
	deadline := e.app.Clock.Now().Add(time.Duration(slaHours[phase]) * time.Hour)
	e.exec(t, "UPDATE contracts SET phase = ?, sla_deadline = ?, version = version + 1 WHERE id IN ?", phase, deadline, ids)
}

// tryDrive is drive for goroutines other than the test's: it returns an
// error instead of failing the test.
func (e *env) tryDrive(id, phase string) error {
	status, body, err := e.raw("GET", "/api/contracts/"+id, e.admin, nil)
	var c contract
	if err != nil || status != 200 || c.unmarshal(body) != nil {
		return fmt.Errorf("get %s: %d %s %v", id, status, body, err)
	}
	for c.Phase != phase {
		i := slices.Index(normalPath, c.Phase)
		if i < 0 || i == len(normalPath)-1 {
			return fmt.Errorf("cannot drive %s from %s to %s", id, c.Phase, phase)
		}
		next := normalPath[i+1]
		if c.Phase == DangInKy && c.BypassProcurementAndCCM {
			next = DangTrinhKy
		}
		status, body, err := e.raw("POST", "/api/contracts/"+id+"/transitions", e.admin, map[string]any{"toPhase": next})
		if err != nil || status != 200 || c.unmarshal(body) != nil {
			return fmt.Errorf("move %s to %s: %d %s %v", id, next, status, body, err)
		}
	}
	return nil
}

// createMany drafts n contracts as the administrator (unchecked, see raw).
func (e *env) createMany(t *testing.T, n int, over func(i int) map[string]any) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		status, body, err := e.raw("POST", "/api/contracts", e.admin, e.body(over(i)))
		var c contract
		if err != nil || status != 201 || c.unmarshal(body) != nil {
			t.Fatalf("create: %d %s %v", status, body, err)
		}
		ids[i] = c.ID
	}
	return ids
}
