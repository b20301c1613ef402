package all_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

// The notifications page and the bell's ticket over HTTP, on both engines.
func TestNotificationPages(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := identitytest.Start(t, driver, testkit.WithConfig("modules.forms.enabled", false))
		w := &world{t: t, app: app, base: webtest.Serve(t, app), admin: identitytest.AdminToken(t, app)}
		w.supplier = w.id(w.api("POST", "/api/suppliers", w.admin, map[string]any{"code": "NCC001", "name": "Công ty Vật tư A", "supplierType": "Material"}, 201))
		w.project = w.id(w.api("POST", "/api/projects", w.admin, map[string]any{"code": "DA001", "name": "Dự án Một"}, 201))
		_, email, token := identitytest.NewUser(t, app, "Drafter")
		_, _, other := identitytest.NewUser(t, app, "DeptManager")
		id := w.contract(token)
		w.api("POST", "/api/contracts/"+id+"/transitions", other, map[string]any{"toPhase": "DangDamPhan"}, 200)

		c := webtest.NewClient(t, w.base)
		c.SignIn(email, identitytest.Password)
		count := regexp.MustCompile(`id="bell-count" data-count="(\d+)"`)
		home := c.Get("/")
		if m := count.FindStringSubmatch(home.Body); m == nil || m[1] != "1" {
			t.Fatalf("bell on home: %v", m)
		}
		list := c.Get("/notifications")
		m := regexp.MustCompile(`action="/notifications/([0-9a-f-]{36})/read"`).FindStringSubmatch(list.Body)
		if list.Status != 200 || m == nil {
			t.Fatalf("notifications page: %d %s", list.Status, webtest.Text(list.Body))
		}
		if r := c.Post("/notifications/"+m[1]+"/read", nil); r.Status != http.StatusSeeOther || r.Location != "/contracts/"+id {
			t.Fatalf("open a notification: %d → %q", r.Status, r.Location)
		}
		if m := count.FindStringSubmatch(c.Get("/").Body); m == nil || m[1] != "0" {
			t.Fatalf("bell after reading: %v", m)
		}

		// The bell's ticket: the page session and the CSRF header.
		if r := c.Do("POST", "/notifications/ws-ticket", nil, nil); r.Status != 403 {
			t.Fatalf("ticket without the CSRF header: %d", r.Status)
		}
		r := c.Do("POST", "/notifications/ws-ticket", nil, map[string]string{"X-CSRF-Token": c.CSRF(), "Origin": c.Base})
		var body struct{ Ticket string }
		if r.Status != 200 || json.Unmarshal([]byte(r.Body), &body) != nil || body.Ticket == "" {
			t.Fatalf("ticket: %d %s", r.Status, r.Body)
		}
		if r := webtest.NewClient(t, w.base).Post("/notifications/ws-ticket", url.Values{}); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login") {
			t.Fatalf("ticket signed out: %d %q", r.Status, r.Location)
		}
	})
}
