// Package web serves the purchase evaluation pages (DESIGN §12): the list
// and the inbox, a new evaluation, and the detail with its quotations side
// by side, the winner, the department opinions, the caller's moves, the
// history and the contract. Handlers are thin adapters over the same
// service as the API (docs/web.md): form in, service call, template out.
package web

import (
	"context"
	"embed"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/procurement/internal/core"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/web"
)

//go:embed templates
var files embed.FS

var pages = web.MustTemplates(files, "templates/*.html")

const base = "/purchase-evaluations"

// Register declares the pages, their menu entry and messages. Access rules
// are the API's: reading and moving need PurchaseEvaluations.Read (the
// workflow's roles decide the moves), drafting needs Create, changing
// needs Update.
func Register(p *web.Pages, svc *core.Service) {
	h := handlers{svc}
	read, create, update := httpx.Require("PurchaseEvaluations.Read"), httpx.Require("PurchaseEvaluations.Create"),
		httpx.Require("PurchaseEvaluations.Update")
	p.Get(base, read, h.list)
	p.Get(base+"/inbox", read, h.inbox)
	p.Get(base+"/new", create, h.newForm)
	p.Post(base, create, h.create)
	p.Get(base+"/:id", read, h.detail)
	p.Get(base+"/:id/edit", update, h.editForm)
	p.Post(base+"/:id", update, h.update)
	p.Post(base+"/:id/quotations", update, h.addQuotation)
	p.Post(base+"/:id/quotations/:quotationId", update, h.updateQuotation)
	p.Post(base+"/:id/quotations/:quotationId/delete", update, h.deleteQuotation)
	p.Post(base+"/:id/winner", update, h.selectWinner)
	p.Post(base+"/:id/opinions", update, h.saveOpinion)
	p.Post(base+"/:id/transitions", read, h.transition)
	p.Post(base+"/:id/contract", update, h.createContract)
	p.Menu(web.MenuEntry{Key: "PurchaseEvaluations", Path: base, Label: "menu.purchaseEvaluations"})
	p.Messages("vi", vi)
	p.Messages("en", en)
}

type handlers struct{ svc *core.Service }

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

// listData is the list page and the inbox page.
type listData struct {
	Inbox    bool
	Items    []core.InboxItem
	Pager    web.Pager
	Search   string
	Phase    string
	Policy   string
	Sort     string
	Phases   []string
	Policies []string
	Sorts    []string
}

// sorts are the list's orders, as the API's sort parameter names them.
var sorts = []string{"-createdAt", "createdAt", "slaDeadline", "-estimatedValue", "estimatedValue", "maPhieu", "title"}

func (h handlers) list(c *fiber.Ctx) error {
	d := listData{Search: c.Query("search"), Phase: c.Query("phase"), Policy: c.Query("policy"), Sort: c.Query("sort"),
		Phases: core.Phases, Policies: core.Policies, Sorts: sorts}
	req, err := httpx.ListRequest(c, core.ListSpec)
	if err != nil {
		return web.RenderProblem(c, pages, "list", "procurement.list.title", d, err)
	}
	pg, err := h.svc.List(c.UserContext(), caller(c), core.FilterOf(func(k string) string { return c.Query(k) }, req), req)
	if err != nil {
		return web.RenderProblem(c, pages, "list", "procurement.list.title", d, err)
	}
	for _, s := range pg.Items {
		d.Items = append(d.Items, core.InboxItem{Summary: s})
	}
	d.Pager = web.NewPager(c, pg)
	return web.Render(c, pages, "list", "procurement.list.title", d)
}

func (h handlers) inbox(c *fiber.Ctx) error {
	d := listData{Inbox: true}
	req, err := httpx.ListRequest(c, core.InboxSpec)
	if err != nil {
		return web.RenderProblem(c, pages, "list", "procurement.inbox.title", d, err)
	}
	pg, err := h.svc.Inbox(c.UserContext(), caller(c), req)
	if err != nil {
		return err
	}
	d.Items, d.Pager = pg.Items, web.NewPager(c, pg)
	return web.Render(c, pages, "list", "procurement.inbox.title", d)
}

// newData is the new evaluation form, and the edit form of a draft (ID
// set): what was typed, and the projects matching a project typed
// ambiguously.
type newData struct {
	ID                                                            string
	Version                                                       int
	Title, Policy, Project, Category, Description, EstimatedValue string
	Projects                                                      []web.Choice
	Categories, Policies                                          []string
}

func (h handlers) newForm(c *fiber.Ctx) error {
	return web.Render(c, pages, "new", "procurement.new.title", newData{Categories: core.Categories, Policies: core.Policies})
}

// form reads the new and edit forms.
func (h handlers) form(c *fiber.Ctx) (newData, core.CreateRequest, error) {
	d := newData{Title: c.FormValue("title"), Policy: c.FormValue("policy"), Project: c.FormValue("project"),
		Category: c.FormValue("category"), Description: c.FormValue("description"),
		EstimatedValue: c.FormValue("estimatedValue"), Categories: core.Categories, Policies: core.Policies}
	in := core.CreateRequest{Title: d.Title, Policy: d.Policy, Description: d.Description}
	if d.Category != "" {
		in.Category = &d.Category
	}
	project, choices, perr := web.Pick("ProjectId", d.Project, h.searchProjects(c.UserContext()))
	value, _, verr := web.ParseAmount(web.Lang(c), "EstimatedValue", d.EstimatedValue)
	in.ProjectID, in.EstimatedValue, d.Projects = project, value, choices
	return d, in, web.JoinFieldErrors(perr, verr)
}

func (h handlers) create(c *fiber.Ctx) error {
	d, in, err := h.form(c)
	if err == nil {
		var e core.Detail
		if e, err = h.svc.Create(c.UserContext(), caller(c), in); err == nil {
			return web.RedirectWithFlash(c, base+"/"+e.ID, "procurement.flash.created")
		}
	}
	return web.RenderProblem(c, pages, "new", "procurement.new.title", d, err)
}

// editData fills the edit form from a draft.
func editData(lang string, e core.Detail) newData {
	d := newData{ID: e.ID, Version: e.Version, Title: e.Title, Policy: e.Policy, Description: e.Description,
		EstimatedValue: web.FormatAmount(lang, e.EstimatedValue), Categories: core.Categories, Policies: core.Policies}
	if e.Project != nil {
		d.Project = e.Project.Code
	}
	if e.Category != nil {
		d.Category = *e.Category
	}
	return d
}

func (h handlers) editForm(c *fiber.Ctx) error {
	e, err := h.svc.Get(c.UserContext(), caller(c), c.Params("id"))
	if err != nil {
		return err
	}
	return web.Render(c, pages, "new", "procurement.edit.title", editData(web.Lang(c), e))
}

// update saves the edit form of a draft as PUT /api/purchase-evaluations/{id}
// does; what the form does not show (department, payment terms) is sent
// as it is. A draft someone changed or moved meanwhile is shown as it now is.
func (h handlers) update(c *fiber.Ctx) error {
	ctx, id := c.UserContext(), c.Params("id")
	d, in, err := h.form(c)
	d.ID = id
	version, verr := web.ParseInt("Version", c.FormValue("version"))
	if err == nil && verr == nil {
		var cur core.Detail
		if cur, err = h.svc.Get(ctx, caller(c), id); err != nil {
			return err
		}
		in.DepartmentID, in.PaymentTerms, in.Policy = cur.DepartmentID, cur.PaymentTerms, ""
		if _, err = h.svc.Update(ctx, caller(c), id, core.UpdateRequest{CreateRequest: in, Version: version}); err == nil {
			return web.RedirectWithFlash(c, base+"/"+id, "flash.saved")
		}
	} else if err == nil {
		err = verr
	}
	if code := apperr.CodeOf(err); code == "stale_version" || code == "not_editable" {
		if cur, gerr := h.svc.Get(ctx, caller(c), id); gerr == nil {
			d = editData(web.Lang(c), cur)
		}
	} else if version != nil {
		d.Version = *version
	}
	return web.RenderProblem(c, pages, "new", "procurement.edit.title", d, err)
}

// searchProjects finds the projects a typed project may mean, through
// master data as the API's search does.
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

func (h handlers) searchSuppliers(ctx context.Context) func(string) ([]web.Choice, error) {
	return func(text string) ([]web.Choice, error) {
		ids, err := h.svc.MasterData.SearchSupplierIDs(ctx, text, 10)
		if err != nil {
			return nil, err
		}
		refs, err := h.svc.MasterData.Suppliers(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := make([]web.Choice, 0, len(ids))
		for _, id := range ids {
			if r, ok := refs[id]; ok && r.IsActive {
				out = append(out, web.Choice{ID: r.ID, Code: r.Code, Name: r.Name})
			}
		}
		return out, nil
	}
}

// detailData is the detail page with the values of the form that was
// sent (Form names it) when the service refused it.
type detailData struct {
	E             core.Detail
	Mine          bool // the caller created it or is Admin: may change the draft and create the contract
	Draft         bool
	Form          string // the form the problem belongs to: quotation, winner, opinion, move, contract
	EditQuote     string // the quotation being edited
	Quote         quoteForm
	Suppliers     []web.Choice // suppliers matching a supplier typed ambiguously
	WinnerID      string
	Reason        string
	Comment       string
	OpinionKinds  []string // the kinds the caller may give
	Opinion       core.OpinionRequest
	OpinionKind   string
	Verdicts      []string
	ContractTypes []string
	ContractType  string
}

type quoteForm struct{ Supplier, Amount, DeliveryDays, WarrantyMonths, Notes string }

// Winner is the chosen quotation, if any.
func (d detailData) Winner() *core.QuotationDTO {
	for i := range d.E.Quotations {
		if d.E.Quotations[i].Selected {
			return &d.E.Quotations[i]
		}
	}
	return nil
}

// Required names the opinions the evaluation's workflow waits for.
func (d detailData) Required() string { return strings.Join(d.E.RequiredOpinions, ", ") }

// CommentRequired reports whether one of the caller's moves needs a comment.
func (d detailData) CommentRequired() bool {
	return slices.ContainsFunc(d.E.AllowedTransitions, func(m workflowdesigner.AllowedMove) bool { return m.CommentRequired })
}

// view shapes an evaluation for the detail page.
func view(p authn.Principal, e core.Detail) detailData {
	d := detailData{E: e, Mine: p.IsAdmin() || e.CreatedBy == p.UserID, Draft: e.Phase == core.DangSoanThao,
		Verdicts: core.Verdicts, ContractTypes: contracts.ContractTypes, ContractType: "Supply"}
	for _, k := range core.OpinionKinds {
		if p.IsAdmin() || p.HasRole(core.OpinionRoles[k]) {
			d.OpinionKinds = append(d.OpinionKinds, k)
		}
	}
	if w := d.Winner(); w != nil {
		d.WinnerID, d.Reason = w.ID, e.SelectionReason
	}
	return d
}

func (h handlers) detail(c *fiber.Ctx) error {
	e, err := h.svc.Get(c.UserContext(), caller(c), c.Params("id"))
	if err != nil {
		return err
	}
	d := view(caller(c), e)
	if q := c.Query("edit"); q != "" && d.Draft {
		for _, x := range e.Quotations {
			if x.ID == q {
				d.EditQuote = q
				d.Quote = quoteForm{Supplier: x.SupplierID, Amount: web.FormatAmount(web.Lang(c), x.Amount),
					DeliveryDays: intText(x.DeliveryDays), WarrantyMonths: intText(x.WarrantyMonths), Notes: x.Notes}
			}
		}
	}
	return web.Render(c, pages, "detail", "procurement.detail.title", d)
}

// refused shows the detail again with the service's problem: the
// evaluation read again (its current state, which matters when someone
// moved it meanwhile) and the values of the form that was sent.
func (h handlers) refused(c *fiber.Ctx, form string, fill func(*detailData), err error) error {
	if ae, ok := apperr.As(err); !ok || ae.Kind == apperr.KindInternal || ae.Kind == apperr.KindUnauthorized {
		return err
	}
	e, gerr := h.svc.Get(c.UserContext(), caller(c), c.Params("id"))
	if gerr != nil {
		return err // no longer visible, or gone: the error page says why the form failed
	}
	d := view(caller(c), e)
	d.Form = form
	fill(&d)
	return web.RenderProblem(c, pages, "detail", "procurement.detail.title", d, err)
}

func (h handlers) done(c *fiber.Ctx, flash string) error {
	return web.RedirectWithFlash(c, base+"/"+c.Params("id"), flash)
}

// quotation reads the quotation form.
func (h handlers) quotation(c *fiber.Ctx) (quoteForm, core.QuotationRequest, []web.Choice, error) {
	f := quoteForm{Supplier: c.FormValue("supplier"), Amount: c.FormValue("amount"), DeliveryDays: c.FormValue("deliveryDays"),
		WarrantyMonths: c.FormValue("warrantyMonths"), Notes: c.FormValue("notes")}
	supplier, choices, serr := web.Pick("SupplierId", f.Supplier, h.searchSuppliers(c.UserContext()))
	amount, _, aerr := web.ParseAmount(web.Lang(c), "Amount", f.Amount)
	days, derr := web.ParseInt("DeliveryDays", f.DeliveryDays)
	months, merr := web.ParseInt("WarrantyMonths", f.WarrantyMonths)
	in := core.QuotationRequest{SupplierID: supplier, Amount: amount, DeliveryDays: days, WarrantyMonths: months, Notes: f.Notes}
	return f, in, choices, web.JoinFieldErrors(serr, aerr, derr, merr)
}

func (h handlers) addQuotation(c *fiber.Ctx) error {
	f, in, choices, err := h.quotation(c)
	if err == nil {
		_, err = h.svc.AddQuotation(c.UserContext(), caller(c), c.Params("id"), in)
	}
	if err != nil {
		return h.refused(c, "quotation", func(d *detailData) { d.Quote, d.Suppliers = f, choices }, err)
	}
	return h.done(c, "procurement.flash.quotationAdded")
}

func (h handlers) updateQuotation(c *fiber.Ctx) error {
	f, in, choices, err := h.quotation(c)
	if err == nil {
		_, err = h.svc.UpdateQuotation(c.UserContext(), caller(c), c.Params("id"), c.Params("quotationId"), in)
	}
	if err != nil {
		return h.refused(c, "quotation", func(d *detailData) {
			d.Quote, d.Suppliers, d.EditQuote = f, choices, c.Params("quotationId")
		}, err)
	}
	return h.done(c, "procurement.flash.quotationSaved")
}

func (h handlers) deleteQuotation(c *fiber.Ctx) error {
	if err := h.svc.DeleteQuotation(c.UserContext(), caller(c), c.Params("id"), c.Params("quotationId")); err != nil {
		return h.refused(c, "quotation", func(*detailData) {}, err)
	}
	return h.done(c, "procurement.flash.quotationDeleted")
}

func (h handlers) selectWinner(c *fiber.Ctx) error {
	in := core.WinnerRequest{QuotationID: c.FormValue("quotationId"), Reason: c.FormValue("reason")}
	if _, err := h.svc.SelectWinner(c.UserContext(), caller(c), c.Params("id"), in); err != nil {
		return h.refused(c, "winner", func(d *detailData) { d.WinnerID, d.Reason = in.QuotationID, in.Reason }, err)
	}
	return h.done(c, "procurement.flash.winnerChosen")
}

func (h handlers) saveOpinion(c *fiber.Ctx) error {
	kind := c.FormValue("kind")
	in := core.OpinionRequest{Verdict: c.FormValue("verdict"), Comment: c.FormValue("comment")}
	if _, err := h.svc.SaveOpinion(c.UserContext(), caller(c), c.Params("id"), kind, in); err != nil {
		return h.refused(c, "opinion", func(d *detailData) { d.Opinion, d.OpinionKind = in, kind }, err)
	}
	return h.done(c, "procurement.flash.opinionSaved")
}

// transition makes one of the caller's moves; the form carries the version
// it was drawn from, so a move someone else made meanwhile is refused as
// stale and the page shows the current state.
func (h handlers) transition(c *fiber.Ctx) error {
	version, verr := web.ParseInt("Version", c.FormValue("version"))
	in := core.TransitionRequest{ToPhase: c.FormValue("toPhase"), Comment: c.FormValue("comment"), Version: version}
	err := verr
	if err == nil {
		_, err = h.svc.Transition(c.UserContext(), caller(c), c.Params("id"), in)
	}
	if err != nil {
		return h.refused(c, "move", func(d *detailData) { d.Comment = in.Comment }, err)
	}
	// A move may take the evaluation out of the caller's sight (it left
	// their inbox): then they go back to their inbox.
	if _, err := h.svc.Get(c.UserContext(), caller(c), c.Params("id")); err != nil {
		if apperr.KindOf(err) != apperr.KindForbidden {
			return err
		}
		return web.RedirectWithFlash(c, base+"/inbox", "procurement.flash.moved")
	}
	return h.done(c, "procurement.flash.moved")
}

// createContract drafts the contract of an approved evaluation through the
// same service call as POST /api/purchase-evaluations/{id}/contract.
func (h handlers) createContract(c *fiber.Ctx) error {
	in := core.ContractRequest{ContractType: c.FormValue("contractType")}
	if _, _, err := h.svc.CreateContract(c.UserContext(), caller(c), c.Params("id"), in); err != nil {
		return h.refused(c, "contract", func(d *detailData) { d.ContractType = in.ContractType }, err)
	}
	return h.done(c, "procurement.flash.contractCreated")
}

func intText(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}
