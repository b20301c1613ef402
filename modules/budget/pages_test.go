package budget_test

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

// signedIn is a page client signed in as a fresh user holding roles.
func (e *env) signedIn(t *testing.T, base string, roles ...string) *webtest.Client {
	t.Helper()
	_, email, _ := identitytest.NewUser(t, e.app, roles...)
	c := webtest.NewClient(t, base)
	c.SignIn(email, identitytest.Password)
	return c
}

var budgetAddress = regexp.MustCompile(`^/budgets/([0-9a-f-]{36})$`)

// The pages apply the API's rules: sign-in, the permission (reading
// without changing shows no forms), CSRF.
func TestBudgetPagesAccess(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		base := webtest.Serve(t, e.app)
		b, _ := e.approvedLine(t, "Block", 5000000)

		webtest.WantRedirect(t, webtest.NewClient(t, base).Get("/budgets"), "/login?next=%2Fbudgets")

		drafter := e.signedIn(t, base, "Drafter")
		webtest.WantPage(t, drafter.Get("/budgets/"+b.ID), 403, "Không được phép")
		if home := drafter.Get("/"); strings.Contains(home.Body, `href="/budgets"`) {
			t.Error("the menu offers budgets to a user who cannot read them")
		}

		finance := e.signedIn(t, base, "Finance") // Budgets: R
		list := finance.Get("/budgets")
		webtest.WantPage(t, list, 200, b.Code, "Đã duyệt", "5.000.000 ₫")
		if !strings.Contains(list.Body, `href="/budgets"`) || strings.Contains(list.Body, `href="/budgets/new"`) {
			t.Error("a reader's menu or list is wrong")
		}
		page := finance.Get("/budgets/" + b.ID)
		webtest.WantPage(t, page, 200, "L1", "Còn lại")
		if strings.Contains(page.Body, `method="post" action="/budgets/`) {
			t.Error("a reader is offered forms")
		}
		webtest.WantPage(t, finance.Post("/budgets/"+b.ID+"/close", url.Values{"version": {strconv.Itoa(b.Version)}}), 403, "Không được phép")
		webtest.WantPage(t, finance.Get("/budgets/new"), 403)

		cc := e.signedIn(t, base, "CostControl")
		webtest.WantPage(t, cc.Post("/budgets/"+b.ID+"/close", url.Values{"csrf_token": {""}, "version": {strconv.Itoa(b.Version)}}), 403)
		webtest.WantPage(t, cc.Get("/budgets?fiscalYear=abc"), 400, "Phải là một số nguyên")
		if got := e.get(t, b.ID); got.Status != "Approved" {
			t.Fatalf("a refused form closed the budget: %s", got.Status)
		}
	})
}

// A budget through the pages: created, lines added, approved, adjusted
// with a reason, an entry posted, a contract's reservation shown with its
// contract, closed (a stale close first); problems in words.
func TestBudgetPagesFlow(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		base := webtest.Serve(t, e.app)
		cc := e.signedIn(t, base, "CostControl")
		webtest.WantPage(t, cc.Get("/budgets/new"), 200, "Ngân sách mới", "Năm tài chính")
		r := cc.Post("/budgets", url.Values{"code": {"x"}, "name": {""}, "fiscalYear": {"2026"}})
		webtest.WantPage(t, r, 400, "Vui lòng sửa các trường bị đánh dấu.", "Bắt buộc nhập.", "Từ 2 đến 32 ký tự")
		r = cc.Post("/budgets", url.Values{"code": {"ns-web"}, "name": {"Ngân sách công trường"}, "project": {"DA001"},
			"fiscalYear": {"2026"}, "onExceed": {"Block"}})
		webtest.WantRedirect(t, r, "/budgets/")
		m := budgetAddress.FindStringSubmatch(r.Location)
		if m == nil {
			t.Fatalf("created at %q", r.Location)
		}
		id, page := m[1], r.Location
		webtest.WantPage(t, cc.Get(page), 200, "Đã tạo ngân sách.", "NS-WEB", "DA001 — Dự án Một", "Nháp")

		webtest.WantPage(t, cc.Post(page+"/lines", url.Values{"code": {"VT"}, "name": {"Vật tư"}, "plannedAmount": {"nhiều"}}), 400, "Phải là một số tiền")
		webtest.WantRedirect(t, cc.Post(page+"/lines", url.Values{"code": {"VT"}, "name": {"Vật tư"}, "plannedAmount": {"1.250.000.000"}}), page)
		webtest.WantPage(t, cc.Post(page+"/lines", url.Values{"code": {"VT"}, "name": {"Lặp"}, "plannedAmount": {"1"}}), 409, "Mã này đã tồn tại.")
		webtest.WantRedirect(t, cc.Post(page+"/lines", url.Values{"code": {"NC"}, "name": {"Nhân công"}, "plannedAmount": {"500.000.000"}}), page)
		webtest.WantRedirect(t, cc.Post(page+"/approve", nil), page)
		webtest.WantPage(t, cc.Get(page), 200, "Đã duyệt ngân sách.", "1.750.000.000 ₫")
		webtest.WantPage(t, cc.Post(page+"/approve", nil), 409, "Có người khác vừa thay đổi hồ sơ này")

		b := e.get(t, id)
		vt := b.line("VT")
		webtest.WantPage(t, cc.Post(page+"/adjustments", url.Values{"lineId": {vt.ID}, "delta": {"-250.000.000"}}), 400, "Bắt buộc nhập.")
		webtest.WantRedirect(t, cc.Post(page+"/adjustments", url.Values{"lineId": {vt.ID}, "delta": {"-250.000.000"}, "reason": {"Giảm khối lượng"}}), page)
		webtest.WantRedirect(t, cc.Post(page+"/commitments", url.Values{"lineId": {vt.ID}, "kind": {"Actual"}, "amount": {"100.000.000"}, "note": {"Tạm ứng"}}), page)

		c := e.newContract(t, map[string]any{"budgetLineId": vt.ID, "value": 200000000})
		e.drive(t, c.ID, DangTrinhKy)
		detail := cc.Get(page)
		webtest.WantPage(t, detail, 200, "Giảm khối lượng", "-250.000.000 ₫", "Tạm ứng", "Tạm giữ", "200.000.000 ₫",
			"700.000.000 ₫") // 1.250 − 250 − 200 reserved − 100 actual
		if !strings.Contains(detail.Body, `href="/contracts/`+c.ID+`"`) {
			t.Error("the reservation does not link its contract")
		}

		webtest.WantPage(t, cc.Post(page+"/close", url.Values{"version": {strconv.Itoa(b.Version - 1)}}), 409, "Có người khác vừa thay đổi hồ sơ này", "Đã duyệt")
		b = e.get(t, id)
		webtest.WantRedirect(t, cc.Post(page+"/close", url.Values{"version": {strconv.Itoa(b.Version)}}), page)
		closed := cc.Get(page)
		webtest.WantPage(t, closed, 200, "Đã đóng ngân sách.", "Đã đóng")
		if strings.Contains(closed.Body, `action="/budgets/`+id+`/commitments"`) {
			t.Error("a closed budget still offers entries")
		}

		cc.Post("/language", url.Values{"lang": {"en"}})
		webtest.WantPage(t, cc.Get(page), 200, "Budget lines", "Remaining", "Closed")
	})
}

// Switched off, the module's pages are gone.
func TestBudgetPagesDisabled(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d, testkit.WithConfig("modules.budget.enabled", false))
		c := webtest.NewClient(t, webtest.Serve(t, e.app))
		c.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)
		webtest.WantPage(t, c.Get("/budgets"), 404)
		if home := c.Get("/"); strings.Contains(home.Body, `href="/budgets"`) {
			t.Error("the menu links a disabled module")
		}
	})
}
