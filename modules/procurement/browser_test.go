package procurement_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

func TestMain(m *testing.M) { webtest.Main(m) }

// A purchase evaluation from quotation to contract in headless Chromium,
// as the users each step needs: Procurement drafts it, quotes two
// suppliers and chooses the dearer one with a reason, the project manager
// and the director approve it from their inboxes, and Procurement creates
// the contract and finds it in the contracts list. SQLite only: the HTTP
// page tests cover both engines.
func TestBrowserEvaluationToContract(t *testing.T) {
	e := start(t, "sqlite")
	base := webtest.Serve(t, e.app)
	tab := func(role string) *webtest.Tab {
		tb := webtest.NewTab(t, base)
		tb.SignIn(e.users[role].email, identitytest.Password)
		return tb
	}
	click := func(tb *webtest.Tab, button, then string) {
		t.Helper()
		tb.Do(chromedp.Click(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.CSS(then)))
	}

	proc := tab("Procurement")
	proc.Open("/purchase-evaluations/new")
	proc.Do(
		chromedp.SendKeys(chromedp.CSS("#f-Title"), "Mua thép xây dựng"),
		chromedp.SendKeys(chromedp.CSS("#f-ProjectId"), "DA001"),
		chromedp.SetValue(chromedp.CSS("#f-Category"), "Material"),
		chromedp.SendKeys(chromedp.CSS("#f-EstimatedValue"), "300.000.000"),
	)
	click(proc, "form[action='/purchase-evaluations'] button[type=submit]", "#evaluation[data-phase=DangSoanThao]")
	page := proc.Path()
	if !evaluationAddress.MatchString(page) {
		t.Fatalf("after creating, the browser is at %s", page)
	}
	maPhieu, _, _ := strings.Cut(proc.Text("#evaluation"), " — ")

	quote := func(supplier, amount, then string) {
		t.Helper()
		proc.Do(chromedp.SendKeys(chromedp.CSS("#f-SupplierId"), supplier), chromedp.SendKeys(chromedp.CSS("#f-Amount"), amount))
		click(proc, "form[action$='/quotations'] button[type=submit]", then)
	}
	quote("NCC-A", "120.000.000", "table.compare")
	quote("NCC-B", "100.000.000", "table.compare thead th:nth-child(3)")
	if got := proc.Text("table.compare thead th:nth-child(2)"); !strings.Contains(got, "Nhà cung cấp B") || !strings.Contains(got, "Giá thấp nhất") {
		t.Errorf("the cheapest is not first and marked: %q", got)
	}

	// The dearer supplier needs a reason: the page says so by the box.
	click(proc, "#f-QuotationId div:nth-of-type(2) input[type=radio]", "#f-QuotationId div:nth-of-type(2) input:checked")
	click(proc, "form[action$='/winner'] button[type=submit]", "#problem")
	if got := proc.Text("#f-Reason + .field-error"); got == "" {
		t.Error("no message next to the reason")
	}
	proc.Do(chromedp.SendKeys(chromedp.CSS("#f-Reason"), "Giao hàng sớm hơn hai tuần."))
	click(proc, "form[action$='/winner'] button[type=submit]", "#winner")
	if got := proc.Text("table.compare thead th.chosen"); !strings.Contains(got, "Nhà cung cấp A") || !strings.Contains(got, "Được chọn") {
		t.Errorf("the chosen quotation is not marked: %q", got)
	}
	click(proc, "button[data-move=ChoDuAn]", "#evaluation[data-phase=ChoDuAn]")

	// Each approver finds it in their inbox and moves it on; it then
	// leaves their sight and they are back in their inbox.
	for _, step := range []struct{ role, to string }{{"ProjectManager", "ChoCEODuyetNCC"}, {"Director", "DaDuyet"}} {
		tb := tab(step.role)
		tb.Open("/purchase-evaluations/inbox")
		if got := tb.Text("main table"); !strings.Contains(got, maPhieu) {
			t.Fatalf("%s's inbox lacks %s: %q", step.role, maPhieu, got)
		}
		click(tb, "main table a", "#evaluation")
		click(tb, "button[data-move="+step.to+"]", ".flash")
		if tb.Path() != "/purchase-evaluations/inbox" {
			t.Errorf("%s is at %s after the move", step.role, tb.Path())
		}
	}

	proc.Open(page)
	if got := proc.Text("#phase"); got != "Đã duyệt" {
		t.Fatalf("phase shown as %q", got)
	}
	proc.Do(chromedp.SetValue(chromedp.CSS("#f-ContractType"), "Supply"))
	click(proc, "#contract button[type=submit]", "#contract-link")
	proc.Open("/contracts")
	if got := proc.Text("main"); !strings.Contains(got, "Mua thép xây dựng ("+maPhieu+")") || !strings.Contains(got, "120.000.000 ₫") {
		t.Errorf("the contracts list lacks the new contract: %q", got)
	}
}
