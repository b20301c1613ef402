package reports_test

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

// svgs returns the <svg> elements of a page, each checked to be well-formed
// XML on its own (an SVG that does not parse draws nothing).
func svgs(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range regexp.MustCompile(`(?s)<svg\b.*?</svg>`).FindAllString(body, -1) {
		dec := xml.NewDecoder(strings.NewReader(s))
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("SVG is not well-formed XML: %v\n%s", err, s)
			}
		}
		id := regexp.MustCompile(`\bid="([^"]+)"`).FindStringSubmatch(s)
		if id == nil {
			t.Fatalf("SVG without id: %s", s)
		}
		out[id[1]] = s
	}
	return out
}

// TestDashboardPage: the dashboard's figures, its two charts as well-formed
// SVG, phases in words, money the Vietnamese way, the menu entries and the
// export through the page; and who may not see it.
func TestDashboardPage(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		w := startWorld(t, driver, 2, 2)
		w.at(t, "2026-11-10T03:00:00Z")
		w.create(t, "a", true, "Subcontract", w.suppliers[0], w.projects[0], "1250000000")
		w.create(t, "b", false, "FrameworkSupply", w.suppliers[1], nil, "300000")
		w.move(t, "b", "DangDamPhan")
		base := webtest.Serve(t, w.app)

		// Signed out → the sign-in page, and back here after it.
		anon := webtest.NewClient(t, base)
		if r := anon.Get("/dashboard"); r.Status != http.StatusSeeOther || r.Location != "/login?next=%2Fdashboard" {
			t.Fatalf("signed out: %d → %q", r.Status, r.Location)
		}

		// A user whose roles do not read the dashboard → the 403 page.
		_, email, _ := identitytest.NewUser(t, w.app)
		none := webtest.NewClient(t, base)
		none.SignIn(email, identitytest.Password)
		if r := none.Get("/dashboard"); r.Status != http.StatusForbidden || !strings.Contains(webtest.Text(r.Body), "Không được phép") {
			t.Fatalf("no Dashboard.Read: %d %s", r.Status, webtest.Text(r.Body))
		}
		if r := none.Get("/reports/contracts/export"); r.Status != http.StatusForbidden {
			t.Fatalf("export without Reports.Read: %d", r.Status)
		}

		admin := webtest.NewClient(t, base)
		admin.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)
		r := admin.Get("/dashboard")
		if r.Status != 200 {
			t.Fatalf("dashboard: %d %s", r.Status, webtest.Text(r.Body))
		}
		text := webtest.Text(r.Body)
		for _, want := range []string{
			"Tổng quan", "Hợp đồng theo giai đoạn", "Đang soạn thảo", "Đang đàm phán", "Từ chối",
			"1.250.300.000 ₫", // the value of the two active contracts
			"1.250.000.000 ₫", "NCC01 — Nhà cung cấp số 1", "DA01 — Dự án số 1", "11/2026",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("dashboard lacks %q: %s", want, text)
			}
		}
		charts := svgs(t, r.Body)
		if bars := strings.Count(charts["chart-phases"], "<rect"); bars != 9 {
			t.Errorf("by-phase chart has %d bars, want 9", bars)
		}
		if !strings.Contains(charts["chart-phases"], ">Đang soạn thảo</text>") {
			t.Errorf("by-phase chart does not name the phases in words: %s", charts["chart-phases"])
		}
		if dots := strings.Count(charts["chart-monthly"], "<circle"); dots != 12 || !strings.Contains(charts["chart-monthly"], "<polyline") {
			t.Errorf("monthly chart: %d points, want 12 and a line", dots)
		}
		for _, link := range []string{`href="/dashboard"`, `href="/reports"`} {
			if !strings.Contains(r.Body, link) {
				t.Errorf("menu lacks %s", link)
			}
		}

		// The export through the page: the API's workbook…
		x := admin.Get("/reports/contracts/export?phase=DangSoanThao")
		if x.Status != 200 || !strings.HasPrefix(x.Header.Get("Content-Type"), "application/vnd.openxmlformats") {
			t.Fatalf("export: %d %s", x.Status, x.Header.Get("Content-Type"))
		}
		f := openXLSX(t, []byte(x.Body))
		rows, err := f.GetRows(f.GetSheetList()[0])
		if err != nil || len(rows) < 2 || rows[1][1] != "Hợp đồng a" {
			t.Fatalf("exported rows: %v %v", rows, err)
		}
		// …and its refusals in words next to the field, on the page the form was on.
		q := url.Values{"phase": {"Nope"}, "from": {"2026-11-20"}, "to": {"2026-11-01"}, "from-page": {"dashboard"}}
		x = admin.Get("/reports/contracts/export?" + q.Encode())
		if x.Status != 400 || !strings.Contains(x.Body, `id="chart-phases"`) {
			t.Fatalf("refused export: %d %s", x.Status, webtest.Text(x.Body))
		}
		text = webtest.Text(x.Body)
		for _, want := range []string{"Vui lòng sửa các trường bị đánh dấu.", "Phải là một trong: DangSoanThao"} {
			if !strings.Contains(text, want) {
				t.Errorf("refused export lacks %q: %s", want, text)
			}
		}
		if !regexp.MustCompile(`id="f-Phase"[\s\S]*?class="field-error"`).MatchString(x.Body) {
			t.Errorf("the phase's problem is not next to its field")
		}
		if x := admin.Get("/reports?phase=Nope"); x.Status != 200 || !strings.Contains(x.Body, `id="export-form"`) {
			t.Fatalf("reports page: %d", x.Status)
		}

		// In English, the same page speaks English.
		if r := admin.Post("/language", url.Values{"lang": {"en"}, "next": {"/dashboard"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("language: %d", r.Status)
		}
		text = webtest.Text(admin.Get("/dashboard").Body)
		for _, want := range []string{"Contracts by phase", "Drafting", "1.250.000.000 ₫"} {
			if !strings.Contains(text, want) {
				t.Errorf("English dashboard lacks %q", want)
			}
		}
	})
}

// TestDashboardPageModuleOff: with the reports module off, its pages are
// not there.
func TestDashboardPageModuleOff(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := identitytest.Start(t, driver, testkit.WithConfig("modules.reports.enabled", false))
		c := webtest.NewClient(t, webtest.Serve(t, app))
		c.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)
		for _, path := range []string{"/dashboard", "/reports", "/reports/contracts/export"} {
			if r := c.Get(path); r.Status != http.StatusNotFound {
				t.Errorf("%s with reports off: %d", path, r.Status)
			}
		}
	})
}
