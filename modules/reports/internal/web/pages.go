// Package web is the reports module's pages (DESIGN §12, docs/web.md): the
// dashboard with its charts, and the Excel export through the API's own
// handler.
package web

import (
	"embed"
	"fmt"
	"html/template"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/reports/internal/core"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/web"
)

//go:embed templates
var files embed.FS

var pages = web.MustTemplates(files, "templates/*.html")

// Register declares the dashboard, the export page and its download, their
// menu entries and messages.
func Register(p *web.Pages, svc *core.Service) {
	h := handlers{svc}
	p.Get("/dashboard", httpx.Require("Dashboard.Read"), h.dashboard)
	p.Get("/reports", httpx.Require("Reports.Read"), h.reports)
	p.Get("/reports/contracts/export", httpx.Require("Reports.Read"), h.export)
	p.Menu(web.MenuEntry{Key: "Dashboard", Path: "/dashboard", Label: "menu.dashboard"})
	p.Menu(web.MenuEntry{Key: "Reports", Path: "/reports", Label: "menu.reports"})
	for _, lang := range web.Languages {
		p.Messages(lang, messages[lang])
		// The phases in the export's words, so page and workbook agree.
		phases := map[string]string{}
		for code, w := range core.PhaseWords(lang) {
			phases["phase."+code] = w
		}
		p.Messages(lang, phases)
	}
}

type handlers struct{ svc *core.Service }

// dashboardData is what the dashboard template shows.
type dashboardData struct {
	Full bool // the whole dashboard, or only the export form (/reports)
	core.Dashboard
	Export  exportForm
	Bars    template.HTML
	Line    template.HTML
	Monthly []monthRow
	Budgets []budgetRow
}

// exportForm is the export's filter as the form was filled.
type exportForm struct {
	Page            string // the page the form is on, to show a refusal on it
	Phases          []string
	Phase, From, To string
}

type monthRow struct {
	Label string
	core.Month
}

// budgetRow is one project's utilisation, with the share spoken for.
type budgetRow struct {
	core.BudgetUse
	Used    money.Amount
	Percent int
}

func (h handlers) dashboard(c *fiber.Ctx) error {
	d, err := h.dashboardData(c)
	if err != nil {
		return err
	}
	return web.Render(c, pages, "dashboard", "dashboard.title", d)
}

func (h handlers) dashboardData(c *fiber.Ctx) (*dashboardData, error) {
	d, err := h.svc.Dashboard(c.UserContext())
	if err != nil {
		return nil, err
	}
	lang := web.Lang(c)
	words := core.PhaseWords(lang)
	out := &dashboardData{Full: true, Dashboard: d, Export: formOf(c, "dashboard")}
	bars := make([]bar, len(d.ByPhase))
	for i, p := range d.ByPhase {
		bars[i] = bar{Label: word(words, p.Phase), Value: p.Count}
	}
	out.Bars = barChart(messages[lang]["dashboard.byPhase"], messages[lang]["dashboard.byPhase.desc"], bars)
	pts := make([]point, len(d.Monthly))
	for i, m := range d.Monthly {
		label := monthLabel(m.Month)
		pts[i] = point{Label: label, Value: m.Count,
			Tip: fmt.Sprintf("%s: %d — %s", label, m.Count, web.FormatMoney(m.TotalValue, "VND"))}
		out.Monthly = append(out.Monthly, monthRow{Label: label, Month: m})
	}
	out.Line = lineChart(messages[lang]["dashboard.monthly"], messages[lang]["dashboard.monthly.desc"], pts)
	if d.BudgetUtilisation != nil {
		for _, b := range *d.BudgetUtilisation {
			r := budgetRow{BudgetUse: b, Used: b.Committed + b.Reserved}
			if b.Planned > 0 {
				r.Percent = int(int64(r.Used) * 100 / int64(b.Planned))
			}
			out.Budgets = append(out.Budgets, r)
		}
	}
	return out, nil
}

// reports is the export page of the Reports menu entry.
func (h handlers) reports(c *fiber.Ctx) error {
	return web.Render(c, pages, "dashboard", "reports.title", &dashboardData{Export: formOf(c, "")})
}

// export streams the workbook through the API's handler; a filter it
// refuses is shown on the page the form was on, next to its fields.
func (h handlers) export(c *fiber.Ctx) error {
	err := h.svc.ServeExport(c)
	if apperr.KindOf(err) != apperr.KindValidation {
		return err
	}
	if c.Query("from-page") == "dashboard" {
		d, derr := h.dashboardData(c)
		if derr != nil {
			return derr
		}
		return web.RenderProblem(c, pages, "dashboard", "dashboard.title", d, err)
	}
	return web.RenderProblem(c, pages, "dashboard", "reports.title", &dashboardData{Export: formOf(c, "")}, err)
}

func formOf(c *fiber.Ctx, page string) exportForm {
	return exportForm{Page: page, Phases: contracts.Phases, Phase: c.Query("phase"), From: c.Query("from"), To: c.Query("to")}
}

// monthLabel writes "2026-11" as "11/2026".
func monthLabel(m string) string {
	t, err := time.Parse("2006-01", m)
	if err != nil {
		return m
	}
	return t.Format("01/2006")
}

func word(m map[string]string, code string) string {
	if w, ok := m[code]; ok {
		return w
	}
	return code
}
