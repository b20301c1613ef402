package procurement_test

import (
	"github.com/contractflow/contractflow/platform/testkit"
	"slices"
	"testing"
)

// Listing: visibility (creator, or an inbox role of the current phase;
// Admin all), filters, search and sort; the inbox by deadline.
func TestListAndVisibility(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter, proc := e.users["Drafter"], e.users["Procurement"]
		mine := e.create(t, drafter.token, map[string]any{"title": "Mua Xi Măng Hà Tiên", "policy": "A"})
		theirs := e.ready(t, "B") // created by Procurement
		submitted := e.drive(t, e.ready(t, "A"), ChoDuAn)

		ids := func(p page) []string { s := p.ids(); slices.Sort(s); return s }
		sorted := func(s ...string) []string { slices.Sort(s); return s }
		cases := []struct {
			name, token, query string
			want               []string
		}{
			{"Drafter sees only their own", drafter.token, "", []string{mine.ID}},
			{"Procurement sees every draft and its own", proc.token, "", sorted(mine.ID, theirs.ID, submitted.ID)},
			{"ProjectManager sees ChoDuAn", e.token("ProjectManager"), "", []string{submitted.ID}},
			{"Director sees nothing yet", e.token("Director"), "", []string{}},
			{"Admin sees all", e.admin, "", sorted(mine.ID, theirs.ID, submitted.ID)},
			{"filter phase", e.admin, "?phase=ChoDuAn", []string{submitted.ID}},
			{"filter policy", e.admin, "?policy=B", []string{theirs.ID}},
			{"filter project", e.admin, "?projectId=" + e.project, sorted(mine.ID, theirs.ID, submitted.ID)},
			{"search title without marks", e.admin, "?search=xi+mang+ha+tien", []string{mine.ID}},
			{"search voucher code", e.admin, "?search=" + theirs.MaPhieu, []string{theirs.ID}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if got := ids(e.list(t, tc.token, tc.query)); !slices.Equal(got, tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			})
		}
		if p := e.list(t, e.admin, "?sort=maPhieu&pageSize=2"); p.TotalCount != 3 || p.TotalPages != 2 || len(p.Items) != 2 ||
			p.Items[0].MaPhieu > p.Items[1].MaPhieu {
			t.Errorf("sorted page %+v", p)
		}
		// Admin's totals, unfiltered or by phase, come from the workflow
		// counts: a deleted draft is in none.
		if r := e.do("DELETE", base+"/"+e.create(t, proc.token, nil).ID, e.admin, nil); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		for q, want := range map[string]int{"?pageSize=1": 3, "?pageSize=1&phase=DangSoanThao": 2, "?pageSize=1&phase=ChoDuAn": 1} {
			if p := e.list(t, e.admin, q); p.TotalCount != want {
				t.Errorf("Admin's list %s: totalCount %d, want %d", q, p.TotalCount, want)
			}
		}
		for _, q := range []string{"?sort=value", "?phase=Nowhere", "?policy=C", "?projectId=x", "?pageSize=101"} {
			testkit.WantProblem(t, e.do("GET", base+q, e.admin, nil), 400, "validation_failed")
		}
		// Another user's evaluation is 403 to open; the inbox role makes it visible.
		testkit.WantProblem(t, e.do("GET", base+"/"+theirs.ID, drafter.token, nil), 403, "forbidden")
		testkit.WantProblem(t, e.do("GET", base+"/"+submitted.ID, e.token("Director"), nil), 403, "forbidden")
		if v := e.get(t, e.token("ProjectManager"), submitted.ID); !slices.Equal(v.allowed(), []string{ChoCEODuyetNCC, DangSoanThao, TuChoi}) {
			t.Errorf("ProjectManager's moves %v", v.allowed())
		}
		// The inbox: waiting on the caller's roles, by deadline, with urgency.
		inbox := e.list(t, e.token("ProjectManager"), "/inbox")
		if len(inbox.Items) != 1 || inbox.Items[0].ID != submitted.ID || inbox.Items[0].Overdue || inbox.Items[0].HoursRemaining != 72 {
			t.Errorf("inbox %+v", inbox.Items)
		}
		if p := e.list(t, drafter.token, "/inbox"); len(p.Items) != 0 {
			t.Errorf("a Drafter's inbox holds %v", p.ids())
		}
		if p := e.list(t, e.admin, "/inbox"); p.TotalCount != 3 {
			t.Errorf("Admin's inbox holds %d", p.TotalCount)
		}
		e.app.Clock.Advance(73 * 60 * 60 * 1e9)
		if p := e.list(t, e.token("ProjectManager"), "/inbox"); !p.Items[0].Overdue || p.Items[0].HoursRemaining != -1 {
			t.Errorf("overdue inbox item %+v", p.Items[0])
		}
	})
}

// Editing and deleting a draft: by its creator or Admin, only in
// DangSoanThao; the policy stays; a stale version is refused.
func TestUpdateAndDelete(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		proc := e.token("Procurement")
		v := e.create(t, e.token("Drafter"), map[string]any{"policy": "A"})
		put := func(token, id string, over map[string]any) *testkit.Response {
			return e.do("PUT", base+"/"+id, token, e.body(over))
		}
		r := put(e.token("Drafter"), v.ID, map[string]any{"title": "Mua cát vàng", "version": 1, "description": "Cát xây"})
		if r.Status != 200 {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		var got evaluation
		r.JSON(t, &got)
		if got.Title != "Mua cát vàng" || got.Description != "Cát xây" || got.Version != 2 || got.MaPhieu != v.MaPhieu {
			t.Errorf("updated %+v", got)
		}
		if p := e.list(t, e.admin, "?search=cat+vang"); len(p.Items) != 1 {
			t.Errorf("search after update: %v", p.ids())
		}
		testkit.WantProblem(t, put(e.token("Drafter"), v.ID, map[string]any{"version": 1}), 409, "stale_version")
		testkit.WantProblem(t, put(e.token("Drafter"), v.ID, map[string]any{"policy": "B"}), 400, "validation_failed", "Policy")
		testkit.WantProblem(t, put(e.token("Drafter"), v.ID, map[string]any{"paymentTerms": []map[string]any{{"milestone": "x", "percent": 99}}}), 400, "validation_failed", "PaymentTerms")
		testkit.WantProblem(t, e.do("PUT", base+"/"+v.ID, e.token("Drafter"), `{"title":`), 400, "validation_failed", "Body")
		// Procurement sees every draft but edits only its own.
		testkit.WantProblem(t, put(proc, v.ID, nil), 403, "forbidden")
		if r := put(e.admin, v.ID, nil); r.Status != 200 {
			t.Errorf("Admin edits: %d %s", r.Status, r.Body)
		}
		// A Drafter has no Delete; Procurement deletes its own draft.
		testkit.WantProblem(t, e.do("DELETE", base+"/"+v.ID, e.token("Drafter"), nil), 403, "forbidden")
		mine := e.create(t, proc, nil)
		if r := e.do("DELETE", base+"/"+mine.ID, proc, nil); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		testkit.WantProblem(t, e.do("GET", base+"/"+mine.ID, e.admin, nil), 404, "not_found")
		if n := e.count(t, "SELECT COUNT(*) FROM purchase_evaluations WHERE id = ? AND deleted_at IS NOT NULL", mine.ID); n != 1 {
			t.Error("delete is not soft")
		}
		// Past DangSoanThao: not editable, not deletable.
		sub := e.drive(t, e.ready(t, "A"), ChoDuAn)
		testkit.WantProblem(t, put(proc, sub.ID, nil), 409, "not_editable")
		testkit.WantProblem(t, e.do("DELETE", base+"/"+sub.ID, proc, nil), 409, "not_deletable")
		if now := e.get(t, e.admin, sub.ID); now.Version != sub.Version {
			t.Errorf("refused edits changed it: %d → %d", sub.Version, now.Version)
		}
	})
}
