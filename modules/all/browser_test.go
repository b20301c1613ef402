package all_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	_ "github.com/contractflow/contractflow/modules/all"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

func TestMain(m *testing.M) { webtest.Main(m) }

// world is one instance with every module, its master data and the users
// of the contract workflow, each signed in in a browser window of their own.
type world struct {
	t        *testing.T
	app      *testkit.App
	base     string
	admin    string // API token
	supplier string
	project  string
}

func (w *world) api(method, path, token string, body any, want int) json.RawMessage {
	w.t.Helper()
	r := w.app.Do(testkit.Request{Method: method, Path: path, Token: token, Body: body})
	if r.Status != want {
		w.t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r.Body
}

func (w *world) id(raw json.RawMessage) string {
	var out struct{ ID string }
	if err := json.Unmarshal(raw, &out); err != nil {
		w.t.Fatal(err)
	}
	return out.ID
}

// person is a user with a browser window.
type person struct {
	email, token string
	tab          *webtest.Tab
}

func (w *world) person(roles ...string) person {
	w.t.Helper()
	_, email, token := identitytest.NewUser(w.t, w.app, roles...)
	tab := webtest.NewTab(w.t, w.base)
	tab.SignIn(email, identitytest.Password)
	return person{email: email, token: token, tab: tab}
}

func (w *world) contract(token string) string {
	w.t.Helper()
	return w.contractOf(token, "Hợp đồng cung cấp thép", "Supply", 350000000)
}

func (w *world) contractOf(token, title, contractType string, value int64) string {
	w.t.Helper()
	return w.id(w.api("POST", "/api/contracts", token, map[string]any{"title": title, "contractType": contractType,
		"supplierId": w.supplier, "projectId": w.project, "value": value}, 201))
}

// TestBrowser drives the pages in headless Chromium: one server and one
// window per user for the whole package. It runs on SQLite only: the pages
// run the same handlers on both engines, which the HTTP tests of each
// module cover on both, and a second browser pass would double the
// suite's slowest minute.
func TestBrowser(t *testing.T) {
	app := identitytest.Start(t, "sqlite", testkit.WithConfig("modules.forms.enabled", false))
	w := &world{t: t, app: app, base: webtest.Serve(t, app), admin: identitytest.AdminToken(t, app)}
	w.supplier = w.id(w.api("POST", "/api/suppliers", w.admin, map[string]any{"code": "NCC001", "name": "Công ty Vật tư A", "supplierType": "Material"}, 201))
	w.project = w.id(w.api("POST", "/api/projects", w.admin, map[string]any{"code": "DA001", "name": "Dự án Một"}, 201))
	drafter, pm, ccm, signer, hr := w.person("Drafter"), w.person("ProjectManager"), w.person("CostControl"), w.person("Director"), w.person("HrAdmin")
	var id string

	// move clicks the move button on the contract's page and waits for the
	// new phase, or reports the problem the page shows.
	move := func(t *testing.T, p person, to, comment string) {
		t.Helper()
		tab := p.tab.On(t)
		tab.Open("/contracts/" + id)
		if comment != "" {
			tab.Do(chromedp.SendKeys(chromedp.CSS("#f-Comment"), comment))
		}
		tab.Do(chromedp.Click(chromedp.CSS(fmt.Sprintf("button[name=toPhase][value=%s]", to))),
			chromedp.WaitVisible(chromedp.CSS(".flash, #problem")))
		if webtest.Eval[bool](tab, `!!document.querySelector('#problem')`) {
			t.Fatalf("moving to %s: %s", to, tab.Text("#problem"))
		}
		// The contract's page, or home when the move took it out of sight.
		if p := tab.Path(); p != "/" && !webtest.Eval[bool](tab, fmt.Sprintf(`!!document.querySelector('#phase[data-phase=%s]')`, to)) {
			t.Fatalf("after moving to %s the page at %s shows %s", to, p, tab.Text("#phase"))
		}
	}
	inInbox := func(t *testing.T, p person) bool {
		tab := p.tab.On(t)
		tab.Open("/")
		return webtest.Eval[bool](tab, fmt.Sprintf(`!!document.querySelector('#inbox tr[data-id="%s"]')`, id))
	}

	t.Run("create a contract through the form", func(t *testing.T) {
		tab := drafter.tab.On(t)
		tab.Open("/contracts/new")
		tab.Do(
			chromedp.SendKeys(chromedp.CSS("#f-Title"), "Hợp đồng thi công cọc khoan nhồi"),
			chromedp.SetValue(chromedp.CSS("#f-ContractType"), "Subcontract"),
			chromedp.SendKeys(chromedp.CSS("#f-SupplierId"), "NCC001"),
			chromedp.SendKeys(chromedp.CSS("#f-ProjectId"), "DA001"),
			chromedp.SendKeys(chromedp.CSS("#f-Value"), "1.250.000.000"),
			chromedp.Click(chromedp.CSS("form[action='/contracts'] button[type=submit]")),
			chromedp.WaitVisible(chromedp.CSS("#phase")),
		)
		id = strings.TrimPrefix(tab.Path(), "/contracts/")
		if len(id) != 36 {
			t.Fatalf("after creating, the browser is at %s", tab.Path())
		}
		if got := tab.Text("#value"); got != "1.250.000.000 ₫" {
			t.Errorf("value shown as %q", got)
		}
		if got := tab.Text("#phase"); got != "Đang soạn thảo" {
			t.Errorf("phase shown as %q", got)
		}
	})
	if id == "" {
		t.FailNow()
	}

	t.Run("return with a comment", func(t *testing.T) {
		move(t, drafter, "DangDamPhan", "")
		// Returning needs a comment: without one the page says so by the box.
		tab := drafter.tab.On(t)
		tab.Do(chromedp.Click(chromedp.CSS("button[name=toPhase][value=DangSoanThao]")),
			chromedp.WaitVisible(chromedp.CSS("#problem")))
		if got := tab.Text("#moves .field-error"); got == "" {
			t.Error("no message next to the comment box")
		}
		move(t, drafter, "DangSoanThao", "Cần bổ sung bảng khối lượng.")
		if got := tab.Text("#history"); !strings.Contains(got, "Cần bổ sung bảng khối lượng.") {
			t.Errorf("history lacks the return comment: %q", got)
		}
	})

	t.Run("the whole normal path, inbox to inbox", func(t *testing.T) {
		if os.Getenv("CONTRACTFLOW_SCREENSHOTS") != "" {
			// A fuller inbox for the README's picture.
			w.contractOf(drafter.token, "Hợp đồng cung cấp bê tông thương phẩm", "Supply", 2_480_000_000)
			w.contractOf(drafter.token, "Hợp đồng dịch vụ thí nghiệm vật liệu", "Service", 185_500_000)
		}
		inInbox(t, drafter)
		drafter.tab.On(t).ScreenshotTo("inbox.png")
		steps := []struct {
			by   person
			to   string
			next *person // whose inbox it enters
		}{
			{drafter, "DangDamPhan", &drafter}, {drafter, "DangGopY", &pm}, {pm, "DangInKy", &drafter},
			{drafter, "DangKiemTraCCM", &ccm}, {ccm, "DangTrinhKy", &signer}, {signer, "DangDongDau", &hr},
			{hr, "DaPhatHanh", nil},
		}
		for _, st := range steps {
			if !inInbox(t, st.by) {
				t.Fatalf("before moving to %s the contract is not in the mover's inbox", st.to)
			}
			if st.to == "DangKiemTraCCM" {
				// The README's picture: half-way, with a return in the history.
				tab := st.by.tab.On(t)
				tab.Open("/contracts/" + id)
				tab.ScreenshotTo("contract-detail.png")
			}
			move(t, st.by, st.to, "")
			if (st.next == nil || st.next.email != st.by.email) && inInbox(t, st.by) {
				t.Errorf("after moving to %s the contract is still in the mover's inbox", st.to)
			}
			if st.next != nil && !inInbox(t, *st.next) {
				t.Errorf("after moving to %s the contract is not in the next inbox", st.to)
			}
		}
		tab := drafter.tab.On(t)
		tab.Open("/contracts/" + id)
		if code := tab.Text("#code"); !strings.HasPrefix(code, "DA001-HDTP-") {
			t.Errorf("published contract code %q", code)
		}
	})

	t.Run("upload and download an attachment", func(t *testing.T) {
		c := w.contract(drafter.token)
		file := filepath.Join(t.TempDir(), "scan.png")
		png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Fatal(err)
		}
		tab := drafter.tab.On(t)
		tab.Open("/contracts/" + c)
		tab.Do(chromedp.SetUploadFiles(chromedp.CSS("#f-File"), []string{file}),
			chromedp.Click(chromedp.CSS("form[action$='/attachments'] button[type=submit]")),
			chromedp.WaitVisible(chromedp.CSS("#attachments a[download]")))
		got := webtest.Eval[string](tab, `fetch(document.querySelector('#attachments a[download]').href)
			.then(r => r.arrayBuffer()).then(b => Array.from(new Uint8Array(b)).map(x => x.toString(16).padStart(2, '0')).join(''))`)
		if want := fmt.Sprintf("%x", png); got != want {
			t.Errorf("downloaded %s, uploaded %s", got, want)
		}
	})

	t.Run("another user's move raises the bell without a reload", func(t *testing.T) {
		c := w.contract(drafter.token)
		tab := drafter.tab.On(t)
		tab.Open("/contracts")
		tab.WaitJS(`document.getElementById('bell').hasAttribute('data-live')`)
		before := webtest.Eval[string](tab, `document.getElementById('bell-count').textContent`)
		_, _, other := identitytest.NewUser(t, app, "DeptManager")
		w.api("POST", "/api/contracts/"+c+"/transitions", other, map[string]any{"toPhase": "DangDamPhan"}, 200)
		tab.WaitJS(fmt.Sprintf(`document.getElementById('bell-count').textContent !== %q`, before))
		if now := tab.Path(); now != "/contracts" {
			t.Errorf("the page reloaded to %s", now)
		}
	})

	t.Run("a revoked permission hides the menu entry", func(t *testing.T) {
		f := w.person("Finance")
		ft := f.tab.On(t)
		if !webtest.Eval[bool](ft, `!!document.querySelector('nav.menu a[href="/contracts"]')`) {
			t.Fatal("Finance does not see Contracts before the change")
		}
		admin := webtest.NewTab(t, w.base)
		admin.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)
		admin.Open("/admin/permissions?role=Finance")
		admin.Do(chromedp.Click(chromedp.CSS("#p-Contracts-Read")),
			chromedp.Click(chromedp.CSS("#matrix button[type=submit]")),
			chromedp.WaitVisible(chromedp.CSS(".flash")))
		ft.Open("/")
		if webtest.Eval[bool](ft, `!!document.querySelector('nav.menu a[href="/contracts"]')`) {
			t.Error("the menu still shows Contracts after the administrator revoked it")
		}
	})
}
