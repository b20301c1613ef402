package procurement_test

import (
	"github.com/contractflow/contractflow/platform/testkit"
	"testing"
)

// Quotations side by side: cheapest first, shared ranks for equal
// amounts, differences to the cheapest in money and percent, the chosen one.
func TestQuotationsSideBySide(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		proc := e.token("Procurement")
		v := e.create(t, proc, map[string]any{"policy": "B"})
		v = e.quote(t, proc, v.ID, e.suppliers[0], 1200000)
		v = e.quote(t, proc, v.ID, e.suppliers[1], 1000000)
		v = e.quote(t, proc, v.ID, e.suppliers[2], 1000000)
		v = e.quote(t, proc, v.ID, e.suppliers[3], 1333333.33)
		type row struct {
			supplier       string
			amount         string
			rank           int
			diff           string
			percent        float64
			hasSupplierRef bool
		}
		want := []row{
			{e.suppliers[1], "1000000", 1, "0", 0, true},
			{e.suppliers[2], "1000000", 1, "0", 0, true},
			{e.suppliers[0], "1200000", 3, "200000", 20, true},
			{e.suppliers[3], "1333333.33", 4, "333333.33", 33.3, true},
		}
		if len(v.Quotations) != len(want) {
			t.Fatalf("%d quotations", len(v.Quotations))
		}
		for i, w := range want {
			q := v.Quotations[i]
			if q.SupplierID != w.supplier || string(q.Amount) != w.amount || q.Rank != w.rank || string(q.DiffToCheapest) != w.diff ||
				q.DiffToCheapestPercent != w.percent || q.Supplier == nil || q.Selected {
				t.Errorf("row %d: %+v, want %+v", i, q, w)
			}
		}
		// Not the cheapest: a reason that is not blank.
		winner := func(body map[string]any) *testkit.Response {
			return e.do("POST", base+"/"+v.ID+"/select-winner", proc, body)
		}
		testkit.WantProblem(t, winner(map[string]any{"quotationId": v.Quotations[2].ID}), 400, "validation_failed", "Reason")
		testkit.WantProblem(t, winner(map[string]any{"quotationId": v.Quotations[2].ID, "reason": "   "}), 400, "validation_failed", "Reason")
		testkit.WantProblem(t, winner(map[string]any{"quotationId": "0190a5c4-0000-7000-8000-000000000000"}), 400, "validation_failed", "QuotationId")
		testkit.WantProblem(t, winner(map[string]any{}), 400, "validation_failed", "QuotationId")
		testkit.WantProblem(t, winner(map[string]any{"quotationId": 5}), 400, "validation_failed", "QuotationId")
		other := e.create(t, proc, nil)
		other = e.quote(t, proc, other.ID, e.suppliers[0], 5)
		testkit.WantProblem(t, winner(map[string]any{"quotationId": other.Quotations[0].ID}), 400, "validation_failed", "QuotationId")
		if now := e.get(t, proc, v.ID); now.SelectedQuotationID != nil || now.Version != v.Version {
			t.Fatalf("refused choices wrote %v (version %d → %d)", now.SelectedQuotationID, v.Version, now.Version)
		}
		r := winner(map[string]any{"quotationId": v.Quotations[2].ID, "reason": "Giao hàng nhanh hơn."})
		if r.Status != 200 {
			t.Fatalf("select: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &v)
		if v.SelectedQuotationID == nil || *v.SelectedQuotationID != v.Quotations[2].ID || !v.Quotations[2].Selected ||
			v.SelectionReason != "Giao hàng nhanh hơn." {
			t.Errorf("chosen %v %q", v.SelectedQuotationID, v.SelectionReason)
		}
		// The cheapest needs no reason; a tie at the cheapest amount is cheapest.
		if r := winner(map[string]any{"quotationId": v.Quotations[1].ID}); r.Status != 200 {
			t.Errorf("cheapest (tied) without reason: %d %s", r.Status, r.Body)
		}
		// Removing the chosen quotation clears the choice.
		if r := e.do("DELETE", base+"/"+v.ID+"/quotations/"+v.Quotations[1].ID, proc, nil); r.Status != 204 {
			t.Fatalf("delete quotation: %d %s", r.Status, r.Body)
		}
		v = e.get(t, proc, v.ID)
		if len(v.Quotations) != 3 || v.SelectedQuotationID != nil || v.Quotations[0].Rank != 1 || v.Quotations[1].Rank != 2 {
			t.Errorf("after delete %+v", v)
		}
		// Updating replaces the quotation.
		r = e.do("PUT", base+"/"+v.ID+"/quotations/"+v.Quotations[2].ID, proc, map[string]any{"supplierId": e.suppliers[3], "amount": 900000,
			"deliveryDays": 3, "warrantyMonths": 24, "notes": "Giá mới"})
		if r.Status != 200 {
			t.Fatalf("update quotation: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &v)
		if v.Quotations[0].SupplierID != e.suppliers[3] || string(v.Quotations[0].Amount) != "900000" || v.Quotations[0].Notes != "Giá mới" || v.Quotations[0].Rank != 1 {
			t.Errorf("updated quotation %+v", v.Quotations[0])
		}
	})
}

// A quotation of an unknown, inactive or already quoted supplier, or with
// a bad amount, is 400 on the field and writes nothing; others may not
// change someone's draft; nothing changes once it is submitted.
func TestQuotationRules(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		proc := e.token("Procurement")
		v := e.create(t, proc, map[string]any{"policy": "A"})
		v = e.quote(t, proc, v.ID, e.suppliers[0], 1000)
		q := v.Quotations[0].ID
		cases := []struct {
			name   string
			body   any
			fields []string
		}{
			{"unknown supplier", map[string]any{"supplierId": "0190a5c4-0000-7000-8000-000000000000", "amount": 1}, []string{"SupplierId"}},
			{"inactive supplier", map[string]any{"supplierId": e.inactive, "amount": 1}, []string{"SupplierId"}},
			{"supplier already quoted", map[string]any{"supplierId": e.suppliers[0], "amount": 1}, []string{"SupplierId"}},
			{"supplier not a uuid", map[string]any{"supplierId": "NCC-A", "amount": 1}, []string{"SupplierId"}},
			{"no amount", map[string]any{"supplierId": e.suppliers[1]}, []string{"Amount"}},
			{"zero amount", map[string]any{"supplierId": e.suppliers[1], "amount": 0}, []string{"Amount"}},
			{"amount as text", map[string]any{"supplierId": e.suppliers[1], "amount": "1000"}, []string{"Amount"}},
			{"negative delivery", map[string]any{"supplierId": e.suppliers[1], "amount": 1, "deliveryDays": -1}, []string{"DeliveryDays"}},
			{"warranty as text", map[string]any{"supplierId": e.suppliers[1], "amount": 1, "warrantyMonths": "12"}, []string{"WarrantyMonths"}},
			{"malformed JSON", `{"supplierId":`, []string{"Body"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				testkit.WantProblem(t, e.do("POST", base+"/"+v.ID+"/quotations", proc, tc.body), 400, "validation_failed", tc.fields...)
			})
		}
		// Updating one quotation to the supplier of another is a duplicate too.
		v = e.quote(t, proc, v.ID, e.suppliers[1], 2000)
		testkit.WantProblem(t, e.do("PUT", base+"/"+v.ID+"/quotations/"+v.Quotations[1].ID, proc,
			map[string]any{"supplierId": e.suppliers[0], "amount": 5}), 400, "validation_failed", "SupplierId")
		if n := e.count(t, "SELECT COUNT(*) FROM purchase_evaluation_quotations WHERE evaluation_id = ?", v.ID); n != 2 {
			t.Errorf("%d quotations", n)
		}
		// Someone else's draft: Procurement sees it (an inbox role of
		// DangSoanThao) but changes only its own; a Drafter does not see it.
		theirs := e.create(t, e.token("Drafter"), nil)
		testkit.WantProblem(t, e.do("POST", base+"/"+theirs.ID+"/quotations", proc, map[string]any{"supplierId": e.suppliers[0], "amount": 1}), 403, "forbidden")
		testkit.WantProblem(t, e.do("POST", base+"/"+v.ID+"/quotations", e.token("Drafter"), map[string]any{"supplierId": e.suppliers[2], "amount": 1}), 403, "forbidden")
		testkit.WantProblem(t, e.do("POST", base+"/"+v.ID+"/select-winner", e.token("Drafter"), map[string]any{"quotationId": q}), 403, "forbidden")
		// After submitting, nothing of it changes.
		r := e.do("POST", base+"/"+v.ID+"/select-winner", proc, map[string]any{"quotationId": q})
		if r.Status != 200 {
			t.Fatal(r.Status)
		}
		e.mustMove(t, proc, v.ID, ChoDuAn, "")
		testkit.WantProblem(t, e.do("POST", base+"/"+v.ID+"/quotations", proc, map[string]any{"supplierId": e.suppliers[2], "amount": 1}), 409, "not_editable")
		testkit.WantProblem(t, e.do("PUT", base+"/"+v.ID+"/quotations/"+q, proc, map[string]any{"supplierId": e.suppliers[0], "amount": 1}), 409, "not_editable")
		testkit.WantProblem(t, e.do("DELETE", base+"/"+v.ID+"/quotations/"+q, proc, nil), 409, "not_editable")
		testkit.WantProblem(t, e.do("POST", base+"/"+v.ID+"/select-winner", proc, map[string]any{"quotationId": v.Quotations[1].ID, "reason": "x"}), 409, "not_editable")
		// 400 comes before 409.
		testkit.WantProblem(t, e.do("POST", base+"/"+v.ID+"/quotations", proc, map[string]any{"supplierId": e.suppliers[2]}), 400, "validation_failed", "Amount")
	})
}
