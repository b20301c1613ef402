package procurement_test

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

// signedIn is a page client signed in as the user of role.
func (e *env) signedIn(t *testing.T, base, role string) *webtest.Client {
	t.Helper()
	c := webtest.NewClient(t, base)
	c.SignIn(e.users[role].email, identitytest.Password)
	return c
}

var evaluationAddress = regexp.MustCompile(`^/purchase-evaluations/([0-9a-f-]{36})$`)

// The pages apply the API's rules: sign-in, the permission, the
// visibility of another user's draft, CSRF; problems are shown in words.
func TestEvaluationPagesAccess(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		base := webtest.Serve(t, e.app)
		v := e.ready(t, "A") // Procurement's draft

		anon := webtest.NewClient(t, base)
		webtest.WantRedirect(t, anon.Get("/purchase-evaluations/"+v.ID), "/login?next="+url.QueryEscape("/purchase-evaluations/"+v.ID))

		// Without PurchaseEvaluations.Read: the 403 page, and no menu entry.
		hr := e.signedIn(t, base, "HrAdmin")
		webtest.WantPage(t, hr.Get("/purchase-evaluations"), 403, "Không được phép")
		if home := hr.Get("/"); strings.Contains(home.Body, `href="/purchase-evaluations"`) {
			t.Error("the menu offers purchase evaluations to a user who cannot read them")
		}

		// A drafter may read evaluations, but not Procurement's draft: the
		// page hides it as the API does (403), and the list leaves it out.
		drafter := e.signedIn(t, base, "Drafter")
		webtest.WantPage(t, drafter.Get("/purchase-evaluations/"+v.ID), 403, "Không được phép")
		list := drafter.Get("/purchase-evaluations")
		webtest.WantPage(t, list, 200, "Đánh giá mua hàng")
		if strings.Contains(list.Body, v.ID) {
			t.Error("the drafter's list shows Procurement's draft")
		}
		if !strings.Contains(list.Body, `href="/purchase-evaluations"`) {
			t.Error("no menu entry for a reader")
		}
		webtest.WantPage(t, drafter.Get("/purchase-evaluations/not-an-id"), 404)

		proc := e.signedIn(t, base, "Procurement")
		page := proc.Get("/purchase-evaluations/" + v.ID)
		webtest.WantPage(t, page, 200, v.MaPhieu, "Đang soạn thảo", "Giá thấp nhất", "Được chọn", "1.000.000 ₫")

		// A form without the CSRF token, or from another site: 403 before anything runs.
		r := proc.Post("/purchase-evaluations/"+v.ID+"/transitions", url.Values{"csrf_token": {""}, "toPhase": {ChoDuAn}})
		webtest.WantPage(t, r, 403)
		r = proc.Do("POST", "/purchase-evaluations/"+v.ID+"/transitions", strings.NewReader("toPhase=ChoDuAn&csrf_token="+proc.CSRF()),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"})
		webtest.WantPage(t, r, 403)
		if got := e.get(t, e.token("Procurement"), v.ID); got.Phase != DangSoanThao {
			t.Fatalf("a refused form moved the evaluation to %s", got.Phase)
		}

		// A problem from the service in words, next to its field.
		v = e.quote(t, e.token("Procurement"), v.ID, e.suppliers[1], 5000000)
		r = proc.Post("/purchase-evaluations/"+v.ID+"/winner", url.Values{"quotationId": {v.Quotations[1].ID}})
		webtest.WantPage(t, r, 400, "Vui lòng sửa các trường bị đánh dấu.", "Báo giá được chọn không phải giá thấp nhất; hãy nêu lý do.")
		if !strings.Contains(r.Body, `href="#f-Reason"`) || strings.Contains(r.Body, `"code"`) {
			t.Errorf("the problem does not link its field or shows JSON: %s", r.Body)
		}
		// Typed words that match no supplier, and an amount that is not one.
		r = proc.Post("/purchase-evaluations/"+v.ID+"/quotations", url.Values{"supplier": {"không có ai"}, "amount": {"mười"}})
		webtest.WantPage(t, r, 400, "Không tìm thấy; hãy nhập mã hoặc một phần tên.", "Phải là một số tiền")

		// English on request.
		proc.Post("/language", url.Values{"lang": {"en"}})
		webtest.WantPage(t, proc.Get("/purchase-evaluations/"+v.ID), 200, "Drafting", "Cheapest", "Quotations side by side")
	})
}

// A form drawn before someone else moved the evaluation says so and shows
// the current state.
func TestEvaluationPageStaleMove(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		base := webtest.Serve(t, e.app)
		v := e.ready(t, "A")
		proc := e.signedIn(t, base, "Procurement")
		webtest.WantPage(t, proc.Get("/purchase-evaluations/"+v.ID), 200, "Đang soạn thảo", "Chuyển: Chờ dự án duyệt")
		e.mustMove(t, e.admin, v.ID, ChoDuAn, "") // meanwhile

		r := proc.Post("/purchase-evaluations/"+v.ID+"/transitions", url.Values{"toPhase": {ChoDuAn}, "version": {strconv.Itoa(v.Version)}})
		webtest.WantPage(t, r, 409, "Có người khác vừa thay đổi hồ sơ này", "Chờ dự án duyệt")
		if strings.Contains(r.Body, `data-move="ChoDuAn"`) {
			t.Error("the stale page still offers the move")
		}
		e.mustMove(t, e.admin, v.ID, ChoCEODuyetNCC, "")
		// A return without the comment it needs.
		v = e.get(t, e.admin, v.ID)
		dir := e.signedIn(t, base, "Director")
		r = dir.Post("/purchase-evaluations/"+v.ID+"/transitions", url.Values{"toPhase": {DangSoanThao}, "version": {strconv.Itoa(v.Version)}})
		webtest.WantPage(t, r, 400, "Vui lòng sửa các trường bị đánh dấu.")
		if !strings.Contains(r.Body, `href="#f-Comment"`) {
			t.Errorf("the missing comment is not linked to its field: %s", webtest.Text(r.Body))
		}
	})
}

// A draft's facts are edited through the form; what the form does not
// show is kept, and a form drawn before someone else saved is refused
// showing the draft as it now is.
func TestEvaluationPageEdit(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		base := webtest.Serve(t, e.app)
		v := e.create(t, e.token("Procurement"), map[string]any{"title": "Mua gạch", "paymentTerms": []map[string]any{
			{"milestone": "Tạm ứng", "percent": 30}, {"milestone": "Nghiệm thu", "percent": 70}}})
		proc := e.signedIn(t, base, "Procurement")
		page := "/purchase-evaluations/" + v.ID
		form := proc.Get(page + "/edit")
		webtest.WantPage(t, form, 200, "Sửa đánh giá mua hàng")
		if !strings.Contains(form.Body, `value="Mua gạch"`) || !strings.Contains(form.Body, `value="DA001"`) || !strings.Contains(form.Body, `value="120000000"`) {
			t.Fatalf("edit form not filled: %s", form.Body)
		}
		edit := url.Values{"title": {"Mua gạch đặc"}, "project": {"DA001"}, "estimatedValue": {"150.000.000"}, "category": {"Material"},
			"policy": {v.Policy}, "version": {strconv.Itoa(v.Version)}}
		webtest.WantRedirect(t, proc.Post(page, edit), page)
		got := e.get(t, e.token("Procurement"), v.ID)
		if got.Title != "Mua gạch đặc" || got.EstimatedValue != "150000000" || len(got.PaymentTerms) != 2 {
			t.Fatalf("after the edit: %+v", got)
		}
		// The same form again: its version is stale.
		edit.Set("title", "Mua gạch rỗng")
		r := proc.Post(page, edit)
		webtest.WantPage(t, r, 409, "Có người khác vừa thay đổi hồ sơ này")
		if !strings.Contains(r.Body, `value="Mua gạch đặc"`) {
			t.Errorf("the stale form does not show the current title: %s", webtest.Text(r.Body))
		}
		// Not the creator: the API's 403.
		webtest.WantPage(t, e.signedIn(t, base, "Drafter").Get(page+"/edit"), 403)
	})
}

// Policy B through the pages only, from the new form to the contract, as
// the users each step needs; on both databases.
func TestEvaluationPagesPolicyB(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		base := webtest.Serve(t, e.app)
		proc := e.signedIn(t, base, "Procurement")
		webtest.WantPage(t, proc.Get("/purchase-evaluations/new"), 200, "Đánh giá mua hàng mới")
		r := proc.Post("/purchase-evaluations", url.Values{"title": {"Mua cáp điện"}, "project": {"DA001"},
			"estimatedValue": {"1.250.000.000"}, "category": {"Material"}})
		webtest.WantRedirect(t, r, "/purchase-evaluations/")
		m := evaluationAddress.FindStringSubmatch(r.Location)
		if m == nil {
			t.Fatalf("created at %q", r.Location)
		}
		id, page := m[1], r.Location
		webtest.WantPage(t, proc.Get(page), 200, "Đã tạo đánh giá.", "B (5 bước duyệt)", "1.250.000.000 ₫")

		for i, amount := range []string{"900.000.000", "850.000.000", "1.100.000.000"} {
			r = proc.Post(page+"/quotations", url.Values{"supplier": {"NCC-" + string(rune('A'+i))}, "amount": {amount}, "deliveryDays": {"30"}})
			webtest.WantRedirect(t, r, page)
		}
		v := e.get(t, e.token("Procurement"), id)
		if len(v.Quotations) != 3 || v.Quotations[0].Amount != "850000000" {
			t.Fatalf("quotations %+v", v.Quotations)
		}
		// Edit one: the form comes filled, the change is saved.
		edit := proc.Get(page + "?edit=" + v.Quotations[2].ID)
		if !strings.Contains(edit.Body, `value="1100000000"`) {
			t.Fatalf("edit form not filled: %s", webtest.Text(edit.Body))
		}
		webtest.WantRedirect(t, proc.Post(page+"/quotations/"+v.Quotations[2].ID, url.Values{"supplier": {v.Quotations[2].SupplierID},
			"amount": {"1.000.000.000"}, "warrantyMonths": {"24"}}), page)
		webtest.WantRedirect(t, proc.Post(page+"/winner", url.Values{"quotationId": {v.Quotations[1].ID}, "reason": {"Giao hàng nhanh hơn."}}), page)
		webtest.WantPage(t, proc.Get(page), 200, "Nhà cung cấp được chọn:", "Giao hàng nhanh hơn.")

		// move makes a move as c's user: back to the evaluation, or to the
		// inbox when the move took it out of the user's sight.
		move := func(c *webtest.Client, to string, back string) {
			t.Helper()
			v := e.get(t, e.admin, id)
			webtest.WantRedirect(t, c.Post(page+"/transitions", url.Values{"toPhase": {to}, "version": {strconv.Itoa(v.Version)}}), back)
			if got := e.get(t, e.admin, id); got.Phase != to {
				t.Fatalf("phase %s, want %s", got.Phase, to)
			}
		}
		inbox := "/purchase-evaluations/inbox"
		move(proc, ChoDuAn, page)
		move(e.signedIn(t, base, "ProjectManager"), ChoYKienPhongBan, inbox)

		// Without the opinions the move is refused in words.
		r = proc.Post(page+"/transitions", url.Values{"toPhase": {ChoCCMKiemTra}})
		webtest.WantPage(t, r, 409, "Còn thiếu ý kiến của các bộ phận.")
		for role, kind := range map[string]string{"Procurement": "PRO", "CostControl": "CCM", "Finance": "FIN"} {
			c := e.signedIn(t, base, role)
			webtest.WantRedirect(t, c.Post(page+"/opinions", url.Values{"kind": {kind}, "verdict": {"Agree"}, "comment": {"Ý kiến " + kind}}), page)
		}
		webtest.WantPage(t, proc.Get(page), 200, "Kiểm soát chi phí (CCM)", "Đồng ý", "Ý kiến FIN")
		move(proc, ChoCCMKiemTra, page)
		move(e.signedIn(t, base, "CostControl"), ChoCEODuyetNCC, inbox)
		move(e.signedIn(t, base, "Director"), DaDuyet, inbox)

		webtest.WantRedirect(t, proc.Post(page+"/contract", url.Values{"contractType": {"Supply"}}), page)
		v = e.get(t, e.token("Procurement"), id)
		if v.ContractID == nil {
			t.Fatal("no contract")
		}
		after := proc.Get(page)
		webtest.WantPage(t, after, 200, "Đã tạo hợp đồng từ đánh giá này.", "Đã duyệt", "Xem hợp đồng")
		if !strings.Contains(after.Body, `href="/contracts/`+*v.ContractID+`"`) {
			t.Error("no link to the contract")
		}
		// Once only: the second form answers in words.
		webtest.WantPage(t, proc.Post(page+"/contract", url.Values{"contractType": {"Supply"}}), 409, "Có người khác vừa thay đổi hồ sơ này")
	})
}

// Switched off, the module's pages are gone.
func TestEvaluationPagesDisabled(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d, testkit.WithConfig("modules.procurement.enabled", false))
		base := webtest.Serve(t, e.app)
		c := webtest.NewClient(t, base)
		c.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)
		for _, p := range []string{"/purchase-evaluations", "/purchase-evaluations/new"} {
			webtest.WantPage(t, c.Get(p), 404)
		}
		if home := c.Get("/"); strings.Contains(home.Body, `href="/purchase-evaluations"`) {
			t.Error("the menu links a disabled module")
		}
	})
}
