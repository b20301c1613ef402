package identity_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/platform/web"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

// pagesModule serves one page behind Contracts.Read with a menu entry, the
// way a module registers its pages (docs/web.md).
type pagesModule struct{}

var _ kernel.PageProvider = pagesModule{}

func (pagesModule) Info() kernel.Info { return kernel.Info{Name: "testpages"} }

func (pagesModule) Pages(p *web.Pages) {
	p.Get("/test-contracts", httpx.Require("Contracts.Read"), func(c *fiber.Ctx) error {
		return c.SendString("contracts page")
	})
	p.Post("/test-contracts", httpx.Require("Contracts.Read"), func(c *fiber.Ctx) error {
		return web.Redirect(c, "/test-contracts")
	})
	p.Menu(web.MenuEntry{Key: "Contracts", Path: "/test-contracts", Label: "test.contracts"})
	p.Messages("vi", map[string]string{"test.contracts": "Hợp đồng thử"})
	p.Messages("en", map[string]string{"test.contracts": "Test contracts"})
}

func startWeb(t *testing.T, driver string, opts ...testkit.Option) (*testkit.App, string) {
	t.Helper()
	mods := testkit.WithModules(
		func() kernel.Module { return identity.New() },
		func() kernel.Module { return menusModule{} },
		func() kernel.Module { return pagesModule{} },
	)
	app := start(t, driver, append([]testkit.Option{mods}, opts...)...)
	return app, webtest.Serve(t, app)
}

func TestWebSignInAndOut(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, base := startWeb(t, driver)
		_, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		c := webtest.NewClient(t, base)

		// Signed out: a page → 303 to the sign-in page and back after it.
		r := c.Get("/test-contracts?page=2")
		if r.Status != http.StatusSeeOther || r.Location != "/login?next="+url.QueryEscape("/test-contracts?page=2") {
			t.Fatalf("signed-out page: %d → %q", r.Status, r.Location)
		}
		r = c.Get(r.Location)
		if r.Status != 200 || !strings.Contains(r.Body, `name="csrf_token"`) || !strings.Contains(webtest.Text(r.Body), "Đăng nhập") {
			t.Fatalf("sign-in page: %d %s", r.Status, webtest.Text(r.Body))
		}

		// A wrong password is shown in words, in Vietnamese, not as JSON.
		r = c.Post("/login", url.Values{"email": {email}, "password": {"wrong-password"}, "next": {"/test-contracts?page=2"}})
		if r.Status != 400 || !strings.Contains(webtest.Text(r.Body), "Email hoặc mật khẩu không đúng.") || strings.Contains(r.Body, `"code"`) {
			t.Fatalf("wrong password: %d %s", r.Status, webtest.Text(r.Body))
		}
		r = c.Post("/login", url.Values{"email": {email}, "password": {identitytest.Password}, "next": {"/test-contracts?page=2"}})
		if r.Status != http.StatusSeeOther || r.Location != "/test-contracts?page=2" {
			t.Fatalf("sign in: %d → %q", r.Status, r.Location)
		}
		if r := c.Get("/test-contracts"); r.Status != 200 || r.Body != "contracts page" {
			t.Fatalf("page after sign-in: %d %s", r.Status, r.Body)
		}
		home := c.Get("/")
		if home.Status != 200 || !strings.Contains(home.Body, `action="/logout"`) || !strings.Contains(webtest.Text(home.Body), "Đăng xuất") {
			t.Fatalf("home: %d %s", home.Status, webtest.Text(home.Body))
		}
		cookie := sessionCookie(t, r)

		// Sign out ends the session: even the old cookie no longer works.
		if r := c.Post("/logout", nil); r.Status != http.StatusSeeOther || r.Location != "/login" {
			t.Fatalf("sign out: %d → %q", r.Status, r.Location)
		}
		if r := c.Get("/test-contracts"); r.Status != http.StatusSeeOther {
			t.Fatalf("after sign-out: %d", r.Status)
		}
		old := webtest.NewClient(t, base)
		if r := old.Do("GET", "/test-contracts", nil, map[string]string{"Cookie": "cf_session=" + cookie}); r.Status != http.StatusSeeOther {
			t.Fatalf("old cookie after sign-out: %d", r.Status)
		}
	})
}

// sessionCookie reads the session cookie a sign-in set.
func sessionCookie(t *testing.T, r *webtest.Response) string {
	t.Helper()
	for _, h := range r.Header.Values("Set-Cookie") {
		if v, ok := strings.CutPrefix(h, "cf_session="); ok {
			if !strings.Contains(h, "HttpOnly") || !strings.Contains(h, "SameSite=Strict") {
				t.Fatalf("session cookie lacks HttpOnly or SameSite=Strict: %s", h)
			}
			v, _, _ = strings.Cut(v, ";")
			return v
		}
	}
	t.Fatalf("no session cookie in %v", r.Header.Values("Set-Cookie"))
	return ""
}

func TestWebSessionEndsWithTheTokenFamily(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, base := startWeb(t, driver)
		admin := identitytest.AdminToken(t, app)
		signedIn := func(email string) (*webtest.Client, string) {
			c := webtest.NewClient(t, base)
			r := c.Post("/login", url.Values{"email": {email}, "password": {identitytest.Password}})
			if r.Status != http.StatusSeeOther {
				t.Fatalf("sign in: %d %s", r.Status, webtest.Text(r.Body))
			}
			return c, sessionCookie(t, r)
		}
		ended := func(c *webtest.Client, why string) {
			t.Helper()
			if r := c.Get("/test-contracts"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login") {
				t.Fatalf("%s: the session still works (%d)", why, r.Status)
			}
		}

		// Disabling the user.
		id, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		c, _ := signedIn(email)
		setActive(t, app, admin, id, false)
		ended(c, "user disabled")

		// A password change through the API.
		_, email, token := identitytest.NewUser(t, app, identity.RoleDrafter)
		c, _ = signedIn(email)
		r := app.Do(testkit.Request{Method: "POST", Path: "/api/auth/change-password", Token: token,
			Body: map[string]string{"currentPassword": identitytest.Password, "newPassword": "Another-Password-2026", "confirmNewPassword": "Another-Password-2026"}})
		if r.Status != 204 {
			t.Fatalf("change password: %d %s", r.Status, r.Body)
		}
		ended(c, "password changed")

		// The session's refresh token redeemed at the API, then presented
		// by the session: reuse, the whole family is revoked.
		_, email, _ = identitytest.NewUser(t, app, identity.RoleDrafter)
		c, cookie := signedIn(email)
		r = refresh(app, cookie)
		if r.Status != 200 {
			t.Fatalf("refresh with the session token: %d %s", r.Status, r.Body)
		}
		var rotated tokens
		r.JSON(t, &rotated)
		ended(c, "session token reused")
		if r := refresh(app, rotated.RefreshToken); r.Status != 401 {
			t.Fatalf("the family's newer token survived the reuse: %d", r.Status)
		}
	})
}

func TestWebCSRFAndOrigin(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, base := startWeb(t, driver)
		_, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		c := webtest.NewClient(t, base)
		c.SignIn(email, identitytest.Password)

		if r := c.Post("/test-contracts", url.Values{"csrf_token": {""}}); r.Status != 403 || !strings.Contains(webtest.Text(r.Body), "Biểu mẫu đã hết hạn") {
			t.Fatalf("POST without a CSRF token: %d %s", r.Status, webtest.Text(r.Body))
		}
		if r := c.Post("/test-contracts", url.Values{"csrf_token": {"forged-token-forged-token"}}); r.Status != 403 {
			t.Fatalf("POST with a wrong CSRF token: %d", r.Status)
		}
		form := url.Values{"csrf_token": {c.CSRF()}}
		r := c.Do("POST", "/test-contracts", strings.NewReader(form.Encode()), map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"})
		if r.Status != 403 {
			t.Fatalf("POST from a foreign origin: %d", r.Status)
		}
		if r := c.Post("/test-contracts", nil); r.Status != http.StatusSeeOther {
			t.Fatalf("POST with the token: %d %s", r.Status, webtest.Text(r.Body))
		}
		// Signing in needs the token too (no login CSRF).
		if r := webtest.NewClient(t, base).Post("/login", url.Values{"csrf_token": {""}, "email": {email}, "password": {identitytest.Password}}); r.Status != 403 {
			t.Fatalf("sign-in without a token: %d", r.Status)
		}
	})
}

func TestWebNotFoundAndErrors(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, base := startWeb(t, driver)
		c := webtest.NewClient(t, base)
		r := c.Get("/no-such-page")
		if r.Status != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(webtest.Text(r.Body), "Không tìm thấy trang") {
			t.Fatalf("unknown address: %d %s %s", r.Status, r.Header.Get("Content-Type"), webtest.Text(r.Body))
		}
		// The API's unknown addresses stay problem documents.
		r = c.Get("/api/no-such-thing")
		if r.Status != 404 || r.Header.Get("Content-Type") != httpx.ProblemContentType {
			t.Fatalf("unknown API address: %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		// A signed-in user without the permission gets a 403 page in words.
		_, email, _ := identitytest.NewUser(t, app, identity.RoleHrAdmin)
		savePermission(t, app, identitytest.AdminToken(t, app), identity.RoleHrAdmin, "Contracts", flags{})
		c.SignIn(email, identitytest.Password)
		r = c.Get("/test-contracts")
		if r.Status != 403 || !strings.Contains(webtest.Text(r.Body), "Không được phép") {
			t.Fatalf("page without permission: %d %s", r.Status, webtest.Text(r.Body))
		}
		if r := c.Get("/no-such-page"); r.Status != 404 || !strings.Contains(r.Body, `action="/logout"`) {
			t.Fatalf("signed-in unknown address: %d (the 404 page should keep the layout)", r.Status)
		}
		// Assets are embedded.
		if r := c.Get("/static/style.css"); r.Status != 200 || !strings.Contains(r.Body, "--accent") {
			t.Fatalf("stylesheet: %d", r.Status)
		}
	})
}

func TestWebDisabledModulePages(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, base := startWeb(t, driver, testkit.WithConfig("modules.testpages.enabled", false))
		_, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		c := webtest.NewClient(t, base)
		c.SignIn(email, identitytest.Password)
		if r := c.Get("/test-contracts"); r.Status != 404 {
			t.Fatalf("page of a disabled module: %d", r.Status)
		}
		if r := c.Get("/"); strings.Contains(r.Body, `href="/test-contracts"`) {
			t.Fatal("the menu links a disabled module's page")
		}
	})
}

func TestWebMenuFollowsPermissionsAndLanguage(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, base := startWeb(t, driver)
		admin := identitytest.AdminToken(t, app)
		_, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		c := webtest.NewClient(t, base)
		c.SignIn(email, identitytest.Password)
		if r := c.Get("/"); !strings.Contains(r.Body, `href="/test-contracts"`) || !strings.Contains(webtest.Text(r.Body), "Hợp đồng thử") {
			t.Fatalf("menu lacks the readable entry: %s", webtest.Text(r.Body))
		}
		savePermission(t, app, admin, identity.RoleDrafter, "Contracts", flags{})
		if r := c.Get("/"); strings.Contains(r.Body, `href="/test-contracts"`) {
			t.Fatal("menu still shows an entry whose permission was revoked")
		}

		// English by choice, saved for the user: a new sign-in keeps it.
		if r := c.Post("/language", url.Values{"lang": {"en"}, "next": {"/"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("choose English: %d %s", r.Status, webtest.Text(r.Body))
		}
		if r := c.Get("/"); !strings.Contains(webtest.Text(r.Body), "Sign out") {
			t.Fatalf("English not applied: %s", webtest.Text(r.Body))
		}
		other := webtest.NewClient(t, base)
		other.SignIn(email, identitytest.Password)
		if r := other.Get("/"); !strings.Contains(webtest.Text(r.Body), "Sign out") || !strings.Contains(r.Body, `lang="en"`) {
			t.Fatalf("the language was not saved for the user: %s", webtest.Text(r.Body))
		}
	})
}

func TestMain(m *testing.M) { webtest.Main(m) }

// TestWebBrowserSignIn signs in and out in a real browser (SQLite only: the
// browser exercises the pages, the engines are covered by the HTTP tests).
func TestWebBrowserSignIn(t *testing.T) {
	app, base := startWeb(t, "sqlite")
	_, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
	tab := webtest.NewTab(t, base)
	tab.Open("/test-contracts")
	if p := tab.Path(); !strings.HasPrefix(p, "/login?next=") {
		t.Fatalf("signed-out page led to %s", p)
	}
	tab.Do(
		chromedp.SendKeys(chromedp.CSS("#f-Email"), email),
		chromedp.SendKeys(chromedp.CSS("#f-Password"), identitytest.Password),
		chromedp.Click(chromedp.CSS("form[action='/login'] button[type=submit]")),
		// The page it returns to is plain text: wait for the form to go.
		chromedp.WaitNotPresent(chromedp.CSS("form[action='/login']")),
	)
	if p := tab.Path(); p != "/test-contracts" {
		t.Fatalf("after sign-in the browser is at %s", p)
	}
	tab.Open("/")
	if got := tab.Text("nav.menu"); !strings.Contains(got, "Hợp đồng thử") {
		t.Fatalf("menu: %q", got)
	}
	tab.Do(chromedp.Click(chromedp.CSS("form[action='/logout'] button")), chromedp.WaitVisible(chromedp.CSS("#f-Email")))
	tab.Open("/")
	if p := tab.Path(); !strings.HasPrefix(p, "/login") {
		t.Fatalf("after sign-out / shows %s", p)
	}
}

// checkedBoxes reads the names of the checked checkboxes of a page.
func checkedBoxes(body string) url.Values {
	out := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="checkbox" name="([^"]+)"[^>]*\schecked`).FindAllStringSubmatch(body, -1) {
		out.Set(m[1], "1")
	}
	return out
}

func TestWebAdministration(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, base := startWeb(t, driver)
		_, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		drafter := webtest.NewClient(t, base)
		drafter.SignIn(email, identitytest.Password)
		admin := webtest.NewClient(t, base)
		admin.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)

		// Users: the list finds the drafter; a new user through the form.
		if r := admin.Get("/admin/users?search=" + url.QueryEscape(email)); r.Status != 200 || !strings.Contains(r.Body, email) {
			t.Fatalf("users page: %d %s", r.Status, webtest.Text(r.Body))
		}
		r := admin.Post("/admin/users", url.Values{"email": {"new.person@test.local"}, "fullName": {"Nguyễn Thị Ánh"},
			"password": {"Long-Enough-Password-1"}, "role.Drafter": {"1"}})
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/admin/users/") {
			t.Fatalf("create user: %d %s", r.Status, webtest.Text(r.Body))
		}
		if page := admin.Get(r.Location); !strings.Contains(page.Body, `value="Nguyễn Thị Ánh"`) {
			t.Fatalf("user page: %s", webtest.Text(page.Body))
		}
		r = admin.Post("/admin/users", url.Values{"email": {"new.person@test.local"}, "fullName": {"Again"}, "password": {"Long-Enough-Password-1"}})
		if r.Status != 409 || !strings.Contains(r.Body, `role="alert"`) {
			t.Fatalf("duplicate email: %d %s", r.Status, webtest.Text(r.Body))
		}
		// The drafter may not see the administration.
		if r := drafter.Get("/admin/users"); r.Status != 403 {
			t.Fatalf("drafter on the users page: %d", r.Status)
		}

		// The permission matrix as checkboxes: revoke Drafter's Contracts.Read
		// and the drafter's menu loses the entry.
		matrix := admin.Get("/admin/permissions?role=Drafter")
		form := checkedBoxes(matrix.Body)
		if form.Get("p.Contracts.Read") == "" {
			t.Fatalf("matrix does not show Drafter's Contracts.Read: %s", webtest.Text(matrix.Body))
		}
		form.Del("p.Contracts.Read")
		form.Set("role", "Drafter")
		if r := admin.Post("/admin/permissions", form); r.Status != http.StatusSeeOther {
			t.Fatalf("save matrix: %d %s", r.Status, webtest.Text(r.Body))
		}
		if r := drafter.Get("/"); strings.Contains(r.Body, `href="/test-contracts"`) {
			t.Fatal("the drafter's menu still links the revoked entry")
		}
		if r := drafter.Get("/test-contracts"); r.Status != 403 {
			t.Fatalf("revoked page: %d", r.Status)
		}
		// The Admin row cannot be lowered.
		if r := admin.Post("/admin/permissions", url.Values{"role": {"Admin"}}); r.Status != 400 {
			t.Fatalf("lowering Admin: %d", r.Status)
		}
	})
}

// The sign-in page applies the API login's lockout and rate limit, and says
// so in words.
func TestWebSignInLockoutAndRateLimit(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, base := startWeb(t, driver, testkit.WithConfig("rateLimit.loginPerMinute", 7))
		_, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		c := webtest.NewClient(t, base)
		for range 5 {
			c.Post("/login", url.Values{"email": {email}, "password": {"wrong-password"}})
		}
		r := c.Post("/login", url.Values{"email": {email}, "password": {identitytest.Password}})
		if r.Status != 400 || !strings.Contains(webtest.Text(r.Body), "Tài khoản bị khoá tạm thời") {
			t.Fatalf("locked account: %d %s", r.Status, webtest.Text(r.Body))
		}
		c.Post("/login", url.Values{"email": {email}, "password": {"wrong-password"}})
		r = c.Post("/login", url.Values{"email": {email}, "password": {"wrong-password"}})
		if r.Status != 429 || !strings.Contains(webtest.Text(r.Body), "Quá nhiều yêu cầu") {
			t.Fatalf("eighth sign-in in a minute: %d %s", r.Status, webtest.Text(r.Body))
		}
	})
}

// A connection that never sends a request (an HTTP client's spare, a
// browser's speculative connection) is answered 408 when the read timeout
// ends, never 400 validation_failed: it has no path, so the page error
// handler renders the answer, and net/http's transport closes an idle
// connection quietly on a 408 but logs any other status as "Unsolicited
// response received on idle HTTP channel" (cfbench saw it).
func TestWebSilentConnectionTimesOutWith408(t *testing.T) {
	_, base := startWeb(t, "sqlite", testkit.WithConfig("http.readTimeout", "200ms"))
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer on the silent connection: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("silent connection answered %d, want 408: %s", res.StatusCode, webtest.Text(string(body)))
	}
}
