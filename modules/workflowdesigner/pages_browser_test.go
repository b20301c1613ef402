package workflowdesigner_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

func TestMain(m *testing.M) { webtest.Main(m) }

// TestWorkflowAdminInBrowser: in a real Chromium, an administrator opens the
// dashboard (its charts render, the export downloads), then creates a draft from the published
// contract workflow, validates it and publishes it. SQLite only: the
// engines are covered by the HTTP tests.
func TestWorkflowAdminInBrowser(t *testing.T) {
	w := startPages(t, "sqlite")
	v1 := w.contractDefault(t)
	tab := webtest.NewTab(t, w.base)
	tab.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)

	tab.Open("/dashboard")
	tab.Do(chromedp.WaitVisible(chromedp.CSS("#chart-phases")), chromedp.WaitVisible(chromedp.CSS("#chart-monthly")))
	for _, chart := range []string{"#chart-phases", "#chart-monthly"} {
		if w := webtest.Eval[float64](tab, `document.querySelector("`+chart+`").getBoundingClientRect().width`); w < 200 {
			t.Errorf("chart %s is %v px wide", chart, w)
		}
	}
	if n := webtest.Eval[int](tab, `document.querySelectorAll("#chart-phases rect").length`); n != 9 {
		t.Errorf("by-phase chart draws %d bars, want 9", n)
	}
	// The export link is fetched by script (download.js), which marks it
	// with the size of the workbook it received.
	tab.Do(chromedp.Click(chromedp.CSS("#export-all")), chromedp.WaitVisible(chromedp.CSS("#export-all[data-downloaded]")))
	if size := webtest.Eval[string](tab, `document.querySelector("#export-all").getAttribute("data-downloaded")`); size == "" || size == "0" {
		t.Errorf("export downloaded %q bytes", size)
	}

	tab.Open("/admin/workflows")
	tab.Do(chromedp.Click(chromedp.CSS(`a[href="/admin/workflows/`+v1.ID+`"]`)), chromedp.WaitVisible(chromedp.CSS("#wf-drawing")))
	if n := webtest.Eval[int](tab, `document.querySelectorAll("#wf-drawing g.step").length`); n != len(v1.Steps) {
		t.Errorf("drawing shows %d steps, want %d", n, len(v1.Steps))
	}
	tab.Do(
		chromedp.SetValue(chromedp.CSS("#copy-form #f-Name"), "Quy trình hợp đồng — bản 2"),
		chromedp.Click(chromedp.CSS("#copy")),
		chromedp.WaitVisible(chromedp.CSS("#publish")),
	)
	if got := tab.Text("#wf-status"); got != "Bản nháp" {
		t.Fatalf("new draft's status %q", got)
	}
	tab.Do(chromedp.Click(chromedp.CSS("#validate")), chromedp.WaitVisible(chromedp.CSS("#valid")))
	// Publishing asks for confirmation first; the test answers yes.
	webtest.Eval[bool](tab, `window.confirm = function () { return true; }, true`)
	tab.Do(chromedp.Click(chromedp.CSS("#publish")), chromedp.WaitVisible(chromedp.CSS(`#wf-status[data-status="Published"]`)))
	if got := tab.Text(".flash"); !strings.Contains(got, "Đã ban hành quy trình.") {
		t.Errorf("after publishing the page says %q", got)
	}
	if !strings.Contains(tab.Text("#h-facts"), "contract-default v2") {
		t.Errorf("published definition is %q", tab.Text("#h-facts"))
	}
}
