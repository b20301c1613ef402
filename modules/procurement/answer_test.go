package procurement_test

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestTransitionAnswerIsTheFreshDetail checks that a transition's answer,
// whose quotations, opinions and history are read inside the move's
// transaction, is exactly the detail a GET returns right after it (for
// the same caller), on every move of a policy B evaluation with tied
// quotations, a department, payment terms, opinions, a return and its
// approval.
func TestTransitionAnswerIsTheFreshDetail(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		proc := e.token("Procurement")
		dept := e.masterdata(t, "/api/departments", map[string]any{"code": "PB01", "name": "Phòng Một"})
		v := e.create(t, proc, map[string]any{"policy": "B", "departmentId": dept, "description": "Mua thép cho tầng 3.",
			"paymentTerms": []map[string]any{{"milestone": "Tạm ứng", "percent": 30, "dueDays": 7}, {"milestone": "Nghiệm thu", "percent": 70}}})
		for i, amount := range []int{2000000, 1000000, 1000000} { // a tie for the cheapest
			r := e.do("POST", base+"/"+v.ID+"/quotations", proc, map[string]any{"supplierId": e.suppliers[i], "amount": amount,
				"deliveryDays": 10 + i, "warrantyMonths": 12, "notes": "Báo giá " + e.suppliers[i][:4]})
			if r.Status != 201 {
				t.Fatalf("quotation: %d %s", r.Status, r.Body)
			}
			v = evaluation{}
			r.JSON(t, &v)
		}
		if r := e.do("POST", base+"/"+v.ID+"/select-winner", proc, map[string]any{"quotationId": v.Quotations[2].ID,
			"reason": "Giao hàng nhanh hơn."}); r.Status != 200 {
			t.Fatalf("winner: %d %s", r.Status, r.Body)
		}
		decode := func(what string, b []byte) map[string]any {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s: %v: %s", what, err, b)
			}
			return m
		}
		check := func(token, to, comment string) map[string]any {
			t.Helper()
			r := e.move(token, v.ID, to, comment)
			if r.Status != 200 {
				t.Fatalf("move to %s: %d %s", to, r.Status, r.Body)
			}
			answer := decode("answer", r.Body)
			g := e.do("GET", base+"/"+v.ID, token, nil)
			if g.Status != 200 {
				t.Fatalf("get: %d %s", g.Status, g.Body)
			}
			if fresh := decode("get", g.Body); !reflect.DeepEqual(answer, fresh) {
				t.Fatalf("move to %s answered\n%s\nbut a GET right after says\n%s", to, r.Body, g.Body)
			}
			return answer
		}
		check(proc, ChoDuAn, "") // the creator, not Admin
		check(e.admin, ChoYKienPhongBan, "")
		for _, k := range []string{"FIN", "PRO", "CCM"} {
			if r := e.opinion(e.admin, v.ID, k, "Agree"); r.Status != 200 {
				t.Fatalf("opinion %s: %d %s", k, r.Status, r.Body)
			}
		}
		check(e.admin, DangSoanThao, "Trả lại: bổ sung hồ sơ") // a return, with its comment; the opinions stay
		for _, to := range []string{ChoDuAn, ChoYKienPhongBan, ChoCCMKiemTra, ChoCEODuyetNCC} {
			check(e.admin, to, "")
		}
		last := check(e.admin, DaDuyet, "Duyệt.")
		if len(last["history"].([]any)) != 8 || len(last["opinions"].([]any)) != 3 || len(last["quotations"].([]any)) != 3 ||
			last["approvedAt"] == nil {
			t.Fatalf("after the path: %s", mustJSON(last))
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
