package contracts_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

// TestVisibility: a non-admin sees a contract in the list, inbox, detail and
// every sub-resource only while they drafted it or hold an inbox role of
// its current phase; Admin sees all.
func TestVisibility(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		outsider := e.user(t, "DeptManager") // sees DangSoanThao, DangDamPhan, DangInKy; may create, update, delete
		finance := e.user(t, "Finance")
		pm := e.user(t, "ProjectManager")
		c := e.create(t, drafter.token, nil)
		e.drive(t, c.ID, DangGopY)
		up := e.upload(t, e.admin, c.ID, "ScannedSigned", "scan.pdf", pdfFile())
		if up.Status != 201 {
			t.Fatalf("upload: %d %s", up.Status, up.Body)
		}
		var att attachment
		up.JSON(t, &att)

		path := "/api/contracts/" + c.ID
		hidden := func(name string, req testkit.Request) testkit.Scenario {
			req.Token = outsider.token
			return testkit.Scenario{Name: name, Request: req, Status: 403, Code: "forbidden"}
		}
		uploadBody, uploadType := multipartBody(t, map[string]string{"purpose": "ScannedSigned"}, "file", "x.pdf", pdfFile())
		e.app.Run(t, []testkit.Scenario{
			hidden("detail", testkit.Request{Method: "GET", Path: path}),
			hidden("update", testkit.Request{Method: "PUT", Path: path, Body: e.body(nil)}),
			hidden("delete", testkit.Request{Method: "DELETE", Path: path}),
			hidden("transition", testkit.Request{Method: "POST", Path: path + "/transitions", Body: map[string]any{"toPhase": DangInKy}}),
			hidden("comment", testkit.Request{Method: "POST", Path: path + "/comments", Body: map[string]any{"content": "xin chào"}}),
			hidden("upload", testkit.Request{Method: "POST", Path: path + "/attachments", Body: uploadBody, ContentType: uploadType}),
			hidden("download", testkit.Request{Method: "GET", Path: path + "/attachments/" + att.ID}),
			hidden("delete attachment", testkit.Request{Method: "DELETE", Path: path + "/attachments/" + att.ID}),
			hidden("draft export", testkit.Request{Method: "POST", Path: path + "/draft-export"}),
		})
		// Nothing happened behind the refusals.
		got := e.get(t, e.admin, c.ID)
		if got.Phase != DangGopY || len(got.Comments) != 0 || len(got.Attachments) != 1 {
			t.Fatalf("refused requests changed the contract: %+v", got)
		}
		t.Run("allowed transitions are the caller's", func(t *testing.T) {
			for _, tc := range []struct {
				name string
				u    user
				want []allowedMove
			}{
				{"finance", finance, []allowedMove{}},
				{"drafter", drafter, []allowedMove{}},
				{"project manager", pm, []allowedMove{{DangInKy, "forward", false}, {DangDamPhan, "return", true}}},
				{"admin", user{token: e.admin}, []allowedMove{{DangInKy, "forward", false}, {DangDamPhan, "return", true}}},
			} {
				if got := e.get(t, tc.u.token, c.ID).AllowedTransitions; !slices.Equal(got, tc.want) {
					t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
				}
			}
		})
		inList := func(u user) bool { return slices.Contains(e.list(t, u.token, "").ids(), c.ID) }
		inInbox := func(u user) bool { return slices.Contains(e.inbox(t, u.token, "").ids(), c.ID) }
		sees := func(u user) bool {
			r := e.do("GET", path, u.token, nil)
			if r.Status != 200 && r.Status != 403 {
				t.Fatalf("detail: %d %s", r.Status, r.Body)
			}
			return r.Status == 200
		}
		for _, tc := range []struct {
			name                string
			u                   user
			detail, list, inbox bool
		}{
			{"outsider in DangGopY", outsider, false, false, false},
			{"drafter in DangGopY", drafter, true, true, false}, // the inbox follows roles only
			{"finance in DangGopY", finance, true, true, true},
			{"project manager in DangGopY", pm, true, true, true},
			{"admin", user{token: e.admin}, true, true, true},
		} {
			if got := [3]bool{sees(tc.u), inList(tc.u), inInbox(tc.u)}; got != [3]bool{tc.detail, tc.list, tc.inbox} {
				t.Errorf("%s: detail, list, inbox = %v, want %v", tc.name, got, [3]bool{tc.detail, tc.list, tc.inbox})
			}
		}

		t.Run("visibility follows the phase", func(t *testing.T) {
			e.mustMove(t, pm.token, c.ID, DangInKy, "")
			for _, tc := range []struct {
				name                string
				u                   user
				detail, list, inbox bool
			}{
				{"dept manager in DangInKy", outsider, true, true, true},
				{"finance in DangInKy", finance, false, false, false},
				{"project manager who moved it", pm, false, false, false},
				{"drafter in DangInKy", drafter, true, true, true},
			} {
				if got := [3]bool{sees(tc.u), inList(tc.u), inInbox(tc.u)}; got != [3]bool{tc.detail, tc.list, tc.inbox} {
					t.Errorf("%s: detail, list, inbox = %v, want %v", tc.name, got, [3]bool{tc.detail, tc.list, tc.inbox})
				}
			}
			// The former outsider may now use the sub-resources.
			r := e.do("POST", path+"/comments", outsider.token, map[string]any{"content": "Đã xem"})
			if r.Status != 201 {
				t.Fatalf("comment: %d %s", r.Status, r.Body)
			}
			if r := e.do("GET", path+"/attachments/"+att.ID, outsider.token, nil); r.Status != 200 {
				t.Fatalf("download: %d %s", r.Status, r.Body)
			}
			testkit.WantProblem(t, e.do("GET", path+"/attachments/"+att.ID, finance.token, nil), 403, "forbidden")
		})
		t.Run("published contracts stay visible to their drafter only", func(t *testing.T) {
			e.drive(t, c.ID, DaPhatHanh)
			hr := e.user(t, "HrAdmin")
			if !sees(drafter) || sees(outsider) || sees(hr) || sees(finance) || !sees(user{token: e.admin}) {
				t.Fatal("wrong visibility of a published contract")
			}
			if inInbox(drafter) || inInbox(user{token: e.admin}) {
				t.Fatal("a published contract is in an inbox")
			}
		})
	})
}

// TestListScopeAndPaging: the visibility rule is applied in the query, so
// totals and pages count only what the caller may see; filters, sorting and
// paging parameters are checked.
func TestListScopeAndPaging(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		a := e.user(t, "Drafter")
		b := e.user(t, "Drafter")
		finance := e.user(t, "Finance")
		ccm := e.user(t, "CostControl")
		hr := e.user(t, "HrAdmin")
		da002 := e.masterdata(t, "/api/projects", map[string]any{"code": "DA002", "name": "Dự án Hai"})
		sup2 := e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC002", "name": "Công ty Thiết bị B", "supplierType": "Equipment"})
		mk := func(u user, phase string, over map[string]any) string {
			e.app.Clock.Advance(time.Minute) // distinct creation times for the default order
			c := e.create(t, u.token, over)
			e.drive(t, c.ID, phase)
			return c.ID
		}
		a1 := mk(a, DangSoanThao, map[string]any{"value": 100})
		a2 := mk(a, DangDamPhan, map[string]any{"value": 300})
		a3 := mk(a, DangGopY, map[string]any{"value": 200, "projectId": da002})
		a4 := mk(a, DangGopY, map[string]any{"value": 500, "supplierId": sup2})
		a5 := mk(a, DaPhatHanh, map[string]any{"value": 400})
		b1 := mk(b, DangSoanThao, map[string]any{"value": 600, "contractType": "Supply"})
		b2 := mk(b, DangGopY, map[string]any{"value": 700})
		b3 := mk(b, DangKiemTraCCM, map[string]any{"value": 800})
		b4 := mk(b, TuChoi, map[string]any{"value": 900})
		// A deleted draft is in no list and no count (Admin's, unfiltered or
		// by phase, comes from the counters).
		if r := e.do("DELETE", "/api/contracts/"+mk(a, DangSoanThao, nil), e.admin, nil); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}

		all := func(u string, query string) []string {
			var ids []string
			for pageNo := 1; ; pageNo++ {
				p := e.list(t, u, fmt.Sprintf("?pageSize=2&page=%d%s", pageNo, query))
				ids = append(ids, p.ids()...)
				if pageNo >= p.TotalPages {
					if len(ids) != p.TotalCount {
						t.Fatalf("pages hold %d items, totalCount %d", len(ids), p.TotalCount)
					}
					return ids
				}
			}
		}
		for _, tc := range []struct {
			name  string
			token string
			query string
			want  []string
		}{
			{"drafter a", a.token, "", []string{a1, a2, a3, a4, a5, b1}},
			{"drafter b", b.token, "", []string{b1, b2, b3, b4, a1, a2}},
			{"finance", finance.token, "", []string{a3, a4, b2}},
			{"cost control", ccm.token, "", []string{a3, a4, b2, b3}},
			{"hr admin", hr.token, "", nil},
			{"admin", e.admin, "", []string{a1, a2, a3, a4, a5, b1, b2, b3, b4}},
			{"drafter a, phase DangGopY", a.token, "&phase=DangGopY", []string{a3, a4}},
			{"admin, phase DangGopY", e.admin, "&phase=DangGopY", []string{a3, a4, b2}},
			{"admin, phase DangSoanThao", e.admin, "&phase=DangSoanThao", []string{a1, b1}},
			{"finance, project DA002", finance.token, "&projectId=" + da002, []string{a3}},
			{"admin, supplier NCC002", e.admin, "&supplierId=" + sup2, []string{a4}},
			{"drafter b, type Supply", b.token, "&contractType=Supply", []string{b1}},
			{"cost control, search", ccm.token, "&search=THẦU%20phụ", []string{a3, a4, b2, b3}},
			{"cost control, search nothing", ccm.token, "&search=zzz", nil},
			{"admin, search by supplier name", e.admin, "&search=thiết%20bị", []string{a4}},
			{"finance, search by supplier name", finance.token, "&search=THIẾT", []string{a4}},
			{"drafter b, search by supplier name, not visible", b.token, "&search=thiết%20bị", nil},
			{"search with LIKE wildcards", e.admin, "&search=%25_", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := all(tc.token, tc.query)
				if !sameSet(got, tc.want) {
					t.Fatalf("sees %v, want %v", got, tc.want)
				}
			})
		}

		t.Run("paging", func(t *testing.T) {
			p := e.list(t, finance.token, "?pageSize=2")
			if p.TotalCount != 3 || p.TotalPages != 2 || len(p.Items) != 2 || p.Page != 1 || p.PageSize != 2 {
				t.Fatalf("page 1: %+v", p)
			}
			p = e.list(t, finance.token, "?pageSize=2&page=3")
			if p.TotalCount != 3 || len(p.Items) != 0 || p.Items == nil {
				t.Fatalf("past the end: %+v", p)
			}
			if p := e.list(t, hr.token, ""); p.TotalCount != 0 || p.TotalPages != 0 || p.Items == nil {
				t.Fatalf("empty list %+v", p)
			}
		})
		t.Run("sorting", func(t *testing.T) {
			values := func(query string) []string {
				var out []string
				for _, c := range e.list(t, e.admin, query).Items {
					out = append(out, c.Value.String())
				}
				return out
			}
			if got := values("?sort=value"); !slices.Equal(got, []string{"100", "200", "300", "400", "500", "600", "700", "800", "900"}) {
				t.Errorf("by value: %v", got)
			}
			if got := values("?sort=-value&pageSize=3"); !slices.Equal(got, []string{"900", "800", "700"}) {
				t.Errorf("by value descending: %v", got)
			}
			// Default: newest first.
			if got := e.list(t, e.admin, "?pageSize=1").Items[0].ID; got != b4 {
				t.Errorf("default order starts with %s, want the newest", got)
			}
		})
		list := func(query string) testkit.Request {
			return testkit.Request{Method: "GET", Path: "/api/contracts" + query, Token: e.admin}
		}
		e.app.Run(t, []testkit.Scenario{
			{Name: "unknown phase", Request: list("?phase=DangNgu"), Status: 400, Code: "validation_failed", Fields: []string{"Phase"}},
			{Name: "unknown type", Request: list("?contractType=Lease"), Status: 400, Code: "validation_failed", Fields: []string{"ContractType"}},
			{Name: "supplier not a UUID", Request: list("?supplierId=NCC001"), Status: 400, Code: "validation_failed", Fields: []string{"SupplierId"}},
			{Name: "project not a UUID", Request: list("?projectId=DA001"), Status: 400, Code: "validation_failed", Fields: []string{"ProjectId"}},
			{Name: "unknown sort", Request: list("?sort=drafterId"), Status: 400, Code: "validation_failed"},
			{Name: "page size too big", Request: list("?pageSize=101"), Status: 400, Code: "validation_failed"},
			{Name: "page zero", Request: list("?page=0"), Status: 400, Code: "validation_failed"},
			{Name: "inbox page size too big", Request: testkit.Request{Method: "GET", Path: "/api/contracts/inbox?pageSize=101", Token: e.admin}, Status: 400, Code: "validation_failed"},
		})
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestInbox: contracts waiting on the caller's roles, most urgent first,
// with overdue and hoursRemaining; Admin's inbox holds every non-terminal
// contract and no terminal one.
func TestInbox(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		dm := e.user(t, "DeptManager")
		c1 := e.create(t, dm.token, nil) // DangSoanThao, due t0+168h
		e.app.Clock.Advance(time.Hour)
		c2 := e.create(t, dm.token, nil)
		e.mustMove(t, dm.token, c2.ID, DangDamPhan, "") // due t0+1h+120h
		e.app.Clock.Advance(time.Hour)
		c3 := e.create(t, dm.token, nil)
		e.drive(t, c3.ID, DangInKy) // due t0+2h+48h
		gopY := e.create(t, dm.token, nil)
		e.drive(t, gopY.ID, DangGopY) // due t0+2h+72h
		done := e.create(t, dm.token, nil)
		e.drive(t, done.ID, DaPhatHanh)
		rejected := e.create(t, dm.token, nil)
		e.drive(t, rejected.ID, TuChoi)

		type item struct {
			id      string
			overdue bool
			hours   float64
		}
		check := func(t *testing.T, p page, want []item) {
			t.Helper()
			if len(p.Items) != len(want) || p.TotalCount != len(want) {
				t.Fatalf("inbox %v (total %d), want %d items", p.ids(), p.TotalCount, len(want))
			}
			for i, w := range want {
				got := p.Items[i]
				if got.ID != w.id || got.Overdue != w.overdue || math.Abs(got.HoursRemaining-w.hours) > 0.05 {
					t.Fatalf("item %d: %s overdue=%v hours=%v, want %s overdue=%v hours=%v", i, got.ID, got.Overdue, got.HoursRemaining, w.id, w.overdue, w.hours)
				}
			}
		}
		check(t, e.inbox(t, dm.token, ""), []item{{c3.ID, false, 48}, {c2.ID, false, 119}, {c1.ID, false, 166}})

		t.Run("overdue after the deadline", func(t *testing.T) {
			e.app.Clock.Advance(60*time.Hour + 30*time.Minute)
			check(t, e.inbox(t, dm.token, ""), []item{{c3.ID, true, -12.5}, {c2.ID, false, 58.5}, {c1.ID, false, 105.5}})
			p := e.inbox(t, dm.token, "?pageSize=2&page=2")
			if p.TotalCount != 3 || p.TotalPages != 2 || len(p.Items) != 1 || p.Items[0].ID != c1.ID {
				t.Fatalf("second page %+v", p)
			}
		})
		t.Run("DangGopY is in the inbox of its six roles", func(t *testing.T) {
			for _, role := range []string{"Finance", "Accounting", "Equipment", "Procurement", "CostControl", "ProjectManager"} {
				u := e.user(t, role)
				if ids := e.inbox(t, u.token, "").ids(); !slices.Equal(ids, []string{gopY.ID}) {
					t.Errorf("%s inbox %v, want the DangGopY contract", role, ids)
				}
			}
			for _, role := range []string{"Drafter", "Director", "AuthorizedSigner", "HrAdmin"} {
				u := e.user(t, role)
				if slices.Contains(e.inbox(t, u.token, "").ids(), gopY.ID) {
					t.Errorf("%s has the DangGopY contract in the inbox", role)
				}
			}
		})
		t.Run("admin inbox holds every non-terminal contract", func(t *testing.T) {
			p := e.inbox(t, e.admin, "?pageSize=100")
			if !sameSet(p.ids(), []string{c1.ID, c2.ID, c3.ID, gopY.ID}) {
				t.Fatalf("admin inbox %v", p.ids())
			}
			for i := 1; i < len(p.Items); i++ {
				if p.Items[i].SLADeadline.Before(*p.Items[i-1].SLADeadline) {
					t.Fatal("admin inbox not ordered by deadline")
				}
			}
		})
		t.Run("roles combine", func(t *testing.T) {
			u := e.user(t, "HrAdmin", "Finance")
			if ids := e.inbox(t, u.token, "").ids(); !slices.Equal(ids, []string{gopY.ID}) {
				t.Fatalf("inbox %v", ids)
			}
			e.drive(t, gopY.ID, DangDongDau)
			if ids := e.inbox(t, u.token, "").ids(); !slices.Equal(ids, []string{gopY.ID}) {
				t.Fatalf("inbox after the move %v", ids)
			}
		})
	})
}
