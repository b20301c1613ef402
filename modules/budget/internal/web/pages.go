// Package web serves the budget pages (DESIGN §12): the list, a new budget,
// and the detail with its lines (planned, adjustments, reserved, committed,
// actual, remaining, the contracts holding each entry) and the forms to add
// lines, approve, close, adjust a line with a reason and post a manual
// commitment. Handlers are thin adapters over the same service as the API
// (docs/web.md): form in, service call, template out.
package web

import (
	"context"
	"embed"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/budget/internal/core"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/web"
)

//go:embed templates
var files embed.FS

var pages = web.MustTemplates(files, "templates/*.html")

const base = "/budgets"

// Register declares the pages, their menu entry and messages, behind the
// same policies as the API.
func Register(p *web.Pages, svc *core.Service) {
	h := handlers{svc}
	read, create, update := httpx.Require("Budgets.Read"), httpx.Require("Budgets.Create"), httpx.Require("Budgets.Update")
	p.Get(base, read, h.list)
	p.Get(base+"/new", create, h.newForm)
	p.Post(base, create, h.create)
	p.Get(base+"/:id", read, h.detail)
	p.Post(base+"/:id/lines", update, h.addLine)
	p.Post(base+"/:id/approve", update, h.approve)
	p.Post(base+"/:id/close", update, h.close)
	p.Post(base+"/:id/adjustments", update, h.adjust)
	p.Post(base+"/:id/commitments", update, h.commit)
	p.Menu(web.MenuEntry{Key: "Budgets", Path: base, Label: "menu.budgets"})
	p.Messages("vi", vi)
	p.Messages("en", en)
}

type handlers struct{ svc *core.Service }

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

var (
	statuses = []string{core.StatusDraft, core.StatusApproved, core.StatusClosed}
	exceeds  = []string{core.ExceedBlock, core.ExceedWarn}
	kinds    = []string{core.KindReserved, core.KindCommitted, core.KindActual, core.KindReleased}
	sorts    = []string{"-fiscalYear,code", "code", "name", "-plannedTotal", "remaining", "-createdAt"}
)

// listData is the list page.
type listData struct {
	Items                            []core.BudgetDTO
	Projects                         map[string]masterdata.Ref
	Pager                            web.Pager
	Search, Status, FiscalYear, Sort string
	Statuses, Sorts                  []string
}

func (h handlers) list(c *fiber.Ctx) error {
	d := listData{Search: c.Query("search"), Status: c.Query("status"), FiscalYear: c.Query("fiscalYear"), Sort: c.Query("sort"),
		Statuses: statuses, Sorts: sorts}
	req, err := httpx.ListRequest(c, core.ListSpec)
	if err != nil {
		return web.RenderProblem(c, pages, "list", "budgets.list.title", d, err)
	}
	f, err := core.ParseListFilter(func(k string) string { return c.Query(k) })
	if err != nil {
		return web.RenderProblem(c, pages, "list", "budgets.list.title", d, err)
	}
	pg, err := h.svc.List(c.UserContext(), f, req)
	if err != nil {
		return err
	}
	var ids []string
	for _, b := range pg.Items {
		if b.ProjectID != nil {
			ids = append(ids, *b.ProjectID)
		}
	}
	if d.Projects, err = h.svc.MasterData.Projects(c.UserContext(), ids); err != nil {
		return err
	}
	d.Items, d.Pager = pg.Items, web.NewPager(c, pg)
	return web.Render(c, pages, "list", "budgets.list.title", d)
}

// newData is the new budget form: what was typed, and the projects
// matching a project typed ambiguously.
type newData struct {
	Code, Name, Project, FiscalYear, OnExceed, Description string
	Projects                                               []web.Choice
	Exceeds                                                []string
}

func (h handlers) newForm(c *fiber.Ctx) error {
	year := strconv.Itoa(h.svc.Clock.Now().In(h.svc.Location).Year())
	return web.Render(c, pages, "new", "budgets.new.title", newData{FiscalYear: year, OnExceed: core.ExceedBlock, Exceeds: exceeds})
}

func (h handlers) create(c *fiber.Ctx) error {
	ctx := c.UserContext()
	d := newData{Code: c.FormValue("code"), Name: c.FormValue("name"), Project: c.FormValue("project"),
		FiscalYear: c.FormValue("fiscalYear"), OnExceed: c.FormValue("onExceed"), Description: c.FormValue("description"),
		Exceeds: exceeds}
	project, choices, perr := web.Pick("ProjectId", d.Project, h.searchProjects(ctx))
	year, yerr := web.ParseInt("FiscalYear", d.FiscalYear)
	d.Projects = choices
	if err := web.JoinFieldErrors(perr, yerr); err != nil {
		return web.RenderProblem(c, pages, "new", "budgets.new.title", d, err)
	}
	in := core.BudgetInput{Code: d.Code, Name: d.Name, OnExceed: d.OnExceed, Description: d.Description}
	if project != "" {
		in.ProjectID = &project
	}
	if year != nil {
		in.FiscalYear = *year
	}
	b, err := h.svc.Create(ctx, caller(c), in)
	if err != nil {
		return web.RenderProblem(c, pages, "new", "budgets.new.title", d, err)
	}
	return web.RedirectWithFlash(c, base+"/"+b.ID, "budgets.flash.created")
}

// searchProjects finds the projects a typed project may mean.
func (h handlers) searchProjects(ctx context.Context) func(string) ([]web.Choice, error) {
	return func(text string) ([]web.Choice, error) {
		ids, err := h.svc.MasterData.SearchProjectIDs(ctx, text, 10)
		if err != nil {
			return nil, err
		}
		refs, err := h.svc.MasterData.Projects(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := make([]web.Choice, 0, len(ids))
		for _, id := range ids {
			if r, ok := refs[id]; ok {
				out = append(out, web.Choice{ID: r.ID, Code: r.Code, Name: r.Name})
			}
		}
		return out, nil
	}
}

// detailData is the detail page with the values of the form that was sent
// (Form names it) when the service refused it.
type detailData struct {
	B       core.Detail
	Project *masterdata.Ref
	Form    string // line, approve, close, adjustment, commitment
	Line    lineForm
	Adjust  adjustForm
	Commit  commitForm
	Kinds   []string
}

type (
	lineForm   struct{ Code, Name, Category, PlannedAmount string }
	adjustForm struct{ LineID, Delta, Reason string }
	commitForm struct{ LineID, Kind, Amount, Contract, Note string }
)

func (h handlers) view(ctx context.Context, b core.Detail) (detailData, error) {
	d := detailData{B: b, Kinds: kinds, Commit: commitForm{Kind: core.KindActual}}
	if b.ProjectID != nil {
		refs, err := h.svc.MasterData.Projects(ctx, []string{*b.ProjectID})
		if err != nil {
			return d, err
		}
		if r, ok := refs[*b.ProjectID]; ok {
			d.Project = &r
		}
	}
	return d, nil
}

func (h handlers) detail(c *fiber.Ctx) error {
	b, err := h.svc.Get(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	d, err := h.view(c.UserContext(), b)
	if err != nil {
		return err
	}
	return web.Render(c, pages, "detail", "budgets.detail.title", d)
}

// refused shows the detail again with the service's problem: the budget
// read again (its current state) and the values of the form that was sent.
func (h handlers) refused(c *fiber.Ctx, form string, fill func(*detailData), err error) error {
	if ae, ok := apperr.As(err); !ok || ae.Kind == apperr.KindInternal || ae.Kind == apperr.KindUnauthorized {
		return err
	}
	b, gerr := h.svc.Get(c.UserContext(), c.Params("id"))
	if gerr != nil {
		return err
	}
	d, verr := h.view(c.UserContext(), b)
	if verr != nil {
		return verr
	}
	d.Form = form
	fill(&d)
	return web.RenderProblem(c, pages, "detail", "budgets.detail.title", d, err)
}

func (h handlers) done(c *fiber.Ctx, flash string) error {
	return web.RedirectWithFlash(c, base+"/"+c.Params("id"), flash)
}

func (h handlers) addLine(c *fiber.Ctx) error {
	f := lineForm{Code: c.FormValue("code"), Name: c.FormValue("name"), Category: c.FormValue("category"),
		PlannedAmount: c.FormValue("plannedAmount")}
	in := core.LineInput{Code: f.Code, Name: f.Name, Category: &f.Category}
	amount, given, err := web.ParseAmount(web.Lang(c), "PlannedAmount", f.PlannedAmount)
	if given && err == nil {
		in.PlannedAmount = &amount
	}
	if err == nil {
		_, err = h.svc.CreateLine(c.UserContext(), caller(c), c.Params("id"), in)
	}
	if err != nil {
		return h.refused(c, "line", func(d *detailData) { d.Line = f }, err)
	}
	return h.done(c, "budgets.flash.lineAdded")
}

func (h handlers) approve(c *fiber.Ctx) error {
	if _, err := h.svc.Approve(c.UserContext(), caller(c), c.Params("id")); err != nil {
		return h.refused(c, "approve", func(*detailData) {}, err)
	}
	return h.done(c, "budgets.flash.approved")
}

// close closes an Approved budget as PUT /api/budgets/{id} with status
// Closed does: the budget as the form saw it (its version), status Closed.
func (h handlers) close(c *fiber.Ctx) error {
	ctx := c.UserContext()
	version, err := web.ParseInt("Version", c.FormValue("version"))
	if err == nil {
		var b core.Detail
		if b, err = h.svc.Get(ctx, c.Params("id")); err != nil {
			return err
		}
		in := core.BudgetInput{Code: b.Code, Name: b.Name, ProjectID: b.ProjectID, DepartmentID: b.DepartmentID,
			FiscalYear: b.FiscalYear, Currency: b.Currency, OnExceed: b.OnExceed, Description: b.Description,
			Status: core.StatusClosed, Version: version}
		_, err = h.svc.Update(ctx, caller(c), c.Params("id"), in)
	}
	if err != nil {
		return h.refused(c, "close", func(*detailData) {}, err)
	}
	return h.done(c, "budgets.flash.closed")
}

func (h handlers) adjust(c *fiber.Ctx) error {
	f := adjustForm{LineID: c.FormValue("lineId"), Delta: c.FormValue("delta"), Reason: c.FormValue("reason")}
	in := core.AdjustmentInput{Reason: f.Reason}
	delta, given, err := web.ParseAmount(web.Lang(c), "Delta", f.Delta)
	if given && err == nil {
		in.Delta = &delta
	}
	if err == nil {
		_, err = h.svc.Adjust(c.UserContext(), caller(c), c.Params("id"), f.LineID, in)
	}
	if err != nil {
		return h.refused(c, "adjustment", func(d *detailData) { d.Adjust = f }, err)
	}
	return h.done(c, "budgets.flash.adjusted")
}

func (h handlers) commit(c *fiber.Ctx) error {
	f := commitForm{LineID: c.FormValue("lineId"), Kind: c.FormValue("kind"), Amount: c.FormValue("amount"),
		Contract: c.FormValue("contractId"), Note: c.FormValue("note")}
	in := core.CommitmentInput{Kind: f.Kind, Note: f.Note}
	if f.Contract != "" {
		in.ContractID = &f.Contract
	}
	amount, given, err := web.ParseAmount(web.Lang(c), "Amount", f.Amount)
	if given && err == nil {
		in.Amount = &amount
	}
	if err == nil {
		_, err = h.svc.Commit(c.UserContext(), caller(c), c.Params("id"), f.LineID, in)
	}
	if err != nil {
		return h.refused(c, "commitment", func(d *detailData) { d.Commit = f }, err)
	}
	return h.done(c, "budgets.flash.committed")
}
