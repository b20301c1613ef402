package contracts_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

// The contract pages over HTTP, on both engines: they call the service as
// the API does, so these tests check the adaptation (forms, redirects,
// words), not the rules again.

func (e *env) browser(t *testing.T, u user) *webtest.Client {
	t.Helper()
	c := webtest.NewClient(t, webtest.Serve(t, e.app))
	c.SignIn(u.email, identitytest.Password)
	return c
}

var contractLink = regexp.MustCompile(`^/contracts/([0-9a-f-]{36})$`)

func TestWebContractPages(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		c := e.browser(t, drafter)

		// New contract through the form: supplier and project by code,
		// value written the Vietnamese way.
		r := c.Post("/contracts", url.Values{"title": {"Hợp đồng cốp pha"}, "contractType": {"Subcontract"},
			"supplier": {"NCC001"}, "project": {"DA001"}, "value": {"1.250.000.000"}, "currency": {"VND"}})
		m := contractLink.FindStringSubmatch(r.Location)
		if r.Status != http.StatusSeeOther || m == nil {
			t.Fatalf("create: %d → %q %s", r.Status, r.Location, webtest.Text(r.Body))
		}
		id := m[1]
		detail := c.Get(r.Location)
		text := webtest.Text(detail.Body)
		for _, want := range []string{"Hợp đồng cốp pha", "Đang soạn thảo", "1.250.000.000 ₫", "Công ty Vật tư A", "Đã tạo hợp đồng."} {
			if !strings.Contains(text, want) {
				t.Errorf("detail lacks %q: %s", want, text)
			}
		}
		if !strings.Contains(detail.Body, `value="DangDamPhan"`) {
			t.Errorf("detail lacks the drafter's move to DangDamPhan")
		}

		// A form error is shown next to the field, in words.
		r = c.Post("/contracts", url.Values{"title": {""}, "contractType": {"Subcontract"}, "supplier": {"NOPE"}, "value": {"0"}})
		if r.Status != 400 || !strings.Contains(webtest.Text(r.Body), "Không tìm thấy.") || strings.Contains(r.Body, `"errors"`) {
			t.Errorf("invalid form: %d %s", r.Status, webtest.Text(r.Body))
		}

		// The list finds it by search and filter; home shows it in my
		// inbox and my drafts.
		if r := c.Get("/contracts?search=cop+pha&phase=DangSoanThao&sort=-value"); r.Status != 200 || !strings.Contains(r.Body, id) {
			t.Errorf("list: %d lacks the contract: %s", r.Status, webtest.Text(r.Body))
		}
		if r := c.Get("/contracts?sort=bogus"); r.Status != 400 {
			t.Errorf("list with an unknown sort: %d", r.Status)
		}
		home := c.Get("/")
		if !strings.Contains(home.Body, `id="inbox"`) || strings.Count(home.Body, `data-id="`+id+`"`) != 2 {
			t.Errorf("home should list the draft in the inbox and the drafts: %s", webtest.Text(home.Body))
		}

		// A move from a stale form: someone moved it meanwhile.
		stale := c.Get("/contracts/" + id)
		version := regexp.MustCompile(`name="version" value="(\d+)"`).FindStringSubmatch(stale.Body)[1]
		e.mustMove(t, drafter.token, id, DangDamPhan, "")
		r = c.Post("/contracts/"+id+"/transitions", url.Values{"toPhase": {"DangDamPhan"}, "version": {version}})
		if r.Status != 409 || !strings.Contains(webtest.Text(r.Body), "Có người khác vừa thay đổi") || !strings.Contains(r.Body, `data-phase="DangDamPhan"`) {
			t.Errorf("stale move: %d %s", r.Status, webtest.Text(r.Body))
		}

		// Return needs a comment: the problem is shown by the comment box.
		r = c.Post("/contracts/"+id+"/transitions", url.Values{"toPhase": {"DangSoanThao"}})
		if r.Status != 400 || !strings.Contains(r.Body, `class="field-error"`) {
			t.Errorf("return without comment: %d %s", r.Status, webtest.Text(r.Body))
		}
		r = c.Post("/contracts/"+id+"/transitions", url.Values{"toPhase": {"DangSoanThao"}, "comment": {"Thiếu phụ lục giá."}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("return with comment: %d %s", r.Status, webtest.Text(r.Body))
		}
		if got := e.get(t, drafter.token, id); got.Phase != DangSoanThao {
			t.Errorf("after return the phase is %s", got.Phase)
		}
		if text := webtest.Text(c.Get("/contracts/" + id).Body); !strings.Contains(text, "Thiếu phụ lục giá.") {
			t.Errorf("history lacks the return comment: %s", text)
		}

		// Comments.
		if r := c.Post("/contracts/"+id+"/comments", url.Values{"content": {"Đã gửi bản sửa."}}); r.Status != http.StatusSeeOther {
			t.Errorf("comment: %d %s", r.Status, webtest.Text(r.Body))
		}
		if text := webtest.Text(c.Get("/contracts/" + id).Body); !strings.Contains(text, "Đã gửi bản sửa.") {
			t.Errorf("comment not shown")
		}
	})
}

func TestWebContractVisibility(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		owner := e.user(t, "Drafter")
		mine := e.create(t, owner.token, nil)
		e.drive(t, mine.ID, DangDamPhan)
		// A Finance user may read contracts but holds no inbox role of
		// DangDamPhan and did not draft it: the API hides it, so do the pages.
		other := e.user(t, "Finance")
		if r := e.do("GET", "/api/contracts/"+mine.ID, other.token, nil); r.Status != 403 {
			t.Fatalf("API precondition: %d", r.Status)
		}
		c := e.browser(t, other)
		r := c.Get("/contracts/" + mine.ID)
		if r.Status != 403 || strings.Contains(r.Body, mine.Title) {
			t.Errorf("another user's contract: %d %s", r.Status, webtest.Text(r.Body))
		}
		if r := c.Get("/contracts"); strings.Contains(r.Body, mine.ID) {
			t.Error("the list shows a contract the API hides")
		}
		if r := c.Get("/"); strings.Contains(r.Body, mine.ID) {
			t.Error("home shows a contract the API hides")
		}
		if r := c.Get("/contracts/" + mine.ID + "/attachments/00000000-0000-0000-0000-000000000000"); r.Status != 403 {
			t.Errorf("attachment of a hidden contract: %d", r.Status)
		}
		// Signed out: 303 to the sign-in page.
		if r := webtest.NewClient(t, c.Base).Get("/contracts/" + mine.ID); r.Status != http.StatusSeeOther {
			t.Errorf("signed out: %d", r.Status)
		}
	})
}

func TestWebContractPagesGoneWithTheModule(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := startWith(t, driver, startOptions{bare: true}, testkit.WithConfig("modules.contracts.enabled", false))
		u := e.user(t, "Drafter")
		c := e.browser(t, u)
		for _, path := range []string{"/contracts", "/contracts/new", "/contracts/00000000-0000-0000-0000-000000000000"} {
			if r := c.Get(path); r.Status != 404 {
				t.Errorf("%s with contracts disabled: %d", path, r.Status)
			}
		}
		if r := c.Get("/"); r.Status != 200 || strings.Contains(r.Body, `href="/contracts"`) {
			t.Errorf("home with contracts disabled: %d", r.Status)
		}
	})
}
