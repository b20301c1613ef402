package budget_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrentReservations: contracts racing for the last remaining
// amount of a Block line — exactly one moves, the others get 409
// budget_exceeded and stay where they were.
func TestConcurrentReservations(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		for _, tc := range []struct {
			name    string
			planned int
			value   int
			n       int
		}{
			{"two contracts, the whole line each", 1000, 1000, 2},
			{"eight contracts, more than half each", 1000, 600, 8},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b, l := e.approvedLine(t, "Block", tc.planned)
				ids := make([]string, tc.n)
				for i := range ids {
					ids[i] = e.newContract(t, map[string]any{"budgetLineId": l.ID, "value": tc.value}).ID
					e.drive(t, ids[i], DangKiemTraCCM)
				}
				statuses := make([]int, tc.n)
				bodies := make([]string, tc.n)
				var wg sync.WaitGroup
				startGun := make(chan struct{})
				for i, id := range ids {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-startGun
						s, body, err := e.raw("POST", "/api/contracts/"+id+"/transitions", e.admin, map[string]any{"toPhase": DangTrinhKy})
						if err != nil {
							t.Error(err)
						}
						statuses[i], bodies[i] = s, string(body)
					}()
				}
				close(startGun)
				wg.Wait()
				won := 0
				for i, s := range statuses {
					switch {
					case s == 200:
						won++
					case s == 409 && strings.Contains(bodies[i], "budget_exceeded"):
						if c := e.contract(t, ids[i]); c.Phase != DangKiemTraCCM {
							t.Errorf("refused contract is in %s", c.Phase)
						}
					default:
						t.Errorf("unexpected answer %d %s", s, bodies[i])
					}
				}
				if won != 1 {
					t.Errorf("%d contracts moved, want exactly 1: %v", won, statuses)
				}
				got := e.get(t, b.ID).line("L1")
				if string(got.ReservedAmount) != fmt.Sprint(tc.value) {
					t.Errorf("reserved %s, want %d", got.ReservedAmount, tc.value)
				}
				e.checkTotals(t)
			})
		}
	})
}

// TestTotalsStayTrue is the property: after random concurrent sequences of
// line changes, adjustments, hand-posted entries and contract moves, every
// total equals the sum recomputed from the rows, and every contract holds
// exactly what its phase calls for.
func TestTotalsStayTrue(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		block, a1 := e.approvedLine(t, "Block", 10000)
		warn, w1 := e.approvedLine(t, "Warn", 3000)
		draft := e.newBudget(t, nil)
		e.addLine(t, draft.ID, "D1", 100)
		approvedLines := []struct{ budget, line string }{{block.ID, a1.ID}, {warn.ID, w1.ID}}

		const workers, perWorker, ops = 6, 3, 30
		type doc struct {
			id, phase string
			value     int
		}
		docs := make([][]*doc, workers)
		rng := rand.New(rand.NewPCG(seed, 1))
		for w := range docs {
			for range perWorker {
				line := approvedLines[rng.IntN(len(approvedLines))]
				v := 100 + rng.IntN(3000)
				c := e.newContract(t, map[string]any{"budgetLineId": line.line, "value": v})
				e.drive(t, c.ID, DangKiemTraCCM)
				docs[w] = append(docs[w], &doc{id: c.ID, phase: DangKiemTraCCM, value: v})
			}
		}

		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(w)+2))
				call := func(method, path string, body any) (int, []byte) {
					s, b, err := e.raw(method, path, e.admin, body)
					if err != nil {
						t.Error(err)
					}
					if s >= 500 {
						t.Errorf("%s %s: %d %s", method, path, s, b)
					}
					return s, b
				}
				for range ops {
					al := approvedLines[rng.IntN(len(approvedLines))]
					linePath := "/api/budgets/" + al.budget + "/lines/" + al.line
					switch rng.IntN(7) {
					case 0, 1: // move one of this worker's contracts one step
						d := docs[w][rng.IntN(len(docs[w]))]
						next, comment := "", ""
						switch d.phase {
						case DangKiemTraCCM:
							next = DangTrinhKy
						case DangTrinhKy:
							next = DangDongDau
							if rng.IntN(3) == 0 {
								next, comment = TuChoi, "Từ chối"
							}
						case DangDongDau:
							next = DaPhatHanh
						default:
							continue
						}
						body := map[string]any{"toPhase": next}
						if comment != "" {
							body["comment"] = comment
						}
						if s, b := call("POST", "/api/contracts/"+d.id+"/transitions", body); s == 200 {
							d.phase = next
						} else if s != 409 {
							t.Errorf("move to %s: %d %s", next, s, b)
						}
					case 2: // adjust, either way; may be refused
						delta := rng.IntN(4000) - 2000
						if delta == 0 {
							delta = 1
						}
						call("POST", linePath+"/adjustments", map[string]any{"delta": delta, "reason": "Điều chỉnh"})
					case 3: // post by hand
						kinds := []string{"Reserved", "Committed", "Actual"}
						call("POST", linePath+"/commitments", map[string]any{"amount": 1 + rng.IntN(500), "kind": kinds[rng.IntN(3)]})
					case 4: // release what was posted by hand, racing others
						_, b := call("GET", "/api/budgets/"+al.budget, nil)
						var bd budget
						_ = json.Unmarshal(b, &bd)
						var sum float64
						for _, l := range bd.Lines {
							for _, c := range l.Commitments {
								if l.ID == al.line && c.ContractID == nil && (c.Kind == "Reserved" || c.Kind == "Committed") {
									f, _ := c.Amount.Float64()
									sum += f
								}
							}
						}
						if sum > 0 {
							call("POST", linePath+"/commitments", map[string]any{"amount": sum, "kind": "Released"})
						}
					case 5: // change the draft's lines
						code := fmt.Sprintf("D%d", 1+rng.IntN(4))
						_, b := call("GET", "/api/budgets/"+draft.ID, nil)
						var bd budget
						_ = json.Unmarshal(b, &bd)
						existing := bd.line(code)
						switch {
						case existing.ID == "":
							call("POST", "/api/budgets/"+draft.ID+"/lines", map[string]any{"code": code, "name": "x", "plannedAmount": 1 + rng.IntN(1000)})
						case rng.IntN(2) == 0:
							call("PUT", "/api/budgets/"+draft.ID+"/lines/"+existing.ID, map[string]any{"code": code, "name": "y", "plannedAmount": 1 + rng.IntN(1000)})
						default:
							call("DELETE", "/api/budgets/"+draft.ID+"/lines/"+existing.ID, nil)
						}
					case 6: // rename an approved line
						call("PUT", linePath, map[string]any{"code": "L1", "name": fmt.Sprintf("Dòng %d", rng.IntN(100))})
					}
				}
			}()
		}
		wg.Wait()
		e.checkTotals(t)

		for _, ds := range docs {
			for _, d := range ds {
				var kind string
				switch d.phase {
				case DangTrinhKy, DangDongDau:
					kind = "Reserved"
				case DaPhatHanh:
					kind = "Committed"
				}
				open := e.count(t, "SELECT COUNT(*) FROM budget_commitments WHERE contract_id = ? AND closed_at IS NULL", d.id)
				right := e.count(t, "SELECT COUNT(*) FROM budget_commitments WHERE contract_id = ? AND closed_at IS NULL AND kind = ? AND amount = ?",
					d.id, kind, d.value*100)
				if (kind == "" && open != 0) || (kind != "" && (open != 1 || right != 1)) {
					t.Errorf("contract in %s holds %d open entries (%d of %s %d)", d.phase, open, right, kind, d.value)
				}
			}
		}
	})
}
