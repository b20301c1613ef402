// Package web is the contracts module's browser pages (DESIGN §12): home
// (my inbox and my drafts), the list, a new contract, the detail with the
// caller's moves, comments, history and attachments. Handlers adapt forms to
// the same service calls as the API's handlers; every check is the
// service's.
package web

import (
	"context"
	"embed"
	"io"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/contracts/internal/core"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/web"
)

//go:embed templates
var files embed.FS

var pages = web.MustTemplates(files, "templates/*.html")

// Register declares the pages, the menu entries and the messages.
func Register(p *web.Pages, svc *core.Service, md masterdata.Lookup, maxUploadBytes int64) {
	h := handlers{svc: svc, md: md, maxBytes: maxUploadBytes}
	p.Get("/", httpx.Authenticated, h.home)
	p.Get("/contracts", httpx.Require("Contracts.Read"), h.list)
	p.Get("/contracts/new", httpx.Require("Contracts.Create"), h.newForm)
	p.Post("/contracts", httpx.Require("Contracts.Create"), h.create)
	p.Get("/contracts/:id", httpx.Require("Contracts.Read"), h.detail)
	p.Post("/contracts/:id/transitions", httpx.Require("Contracts.Read"), h.transition)
	p.Post("/contracts/:id/comments", httpx.Require("Contracts.Read"), h.comment)
	p.Post("/contracts/:id/attachments", httpx.Require("Contracts.Update"), h.upload)
	p.Get("/contracts/:id/attachments/:attachmentId", httpx.Require("Contracts.Read"), h.download)
	p.Post("/contracts/:id/draft-export", httpx.Require("Contracts.Update"), h.draftExport)
	p.Menu(web.MenuEntry{Path: "/", Label: "nav.home", Order: 0})
	p.Menu(web.MenuEntry{Key: "Contracts", Path: "/contracts", Label: "contracts.menu"})
	p.Messages("vi", vi)
	p.Messages("en", en)
}

type handlers struct {
	svc      *core.Service
	md       masterdata.Lookup
	maxBytes int64
}

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

// homeData is my inbox (overdue first: it is ordered by deadline) and my
// drafts.
type homeData struct {
	CanRead bool
	Inbox   paging.Page[core.InboxItem]
	Drafts  []core.Summary
}

func (h handlers) home(c *fiber.Ctx) error {
	p := caller(c)
	var d homeData
	if !web.Allowed(c, "Contracts.Read") {
		return web.Render(c, pages, "home", "home.title", d)
	}
	d.CanRead = true
	inbox, err := h.svc.Inbox(c.UserContext(), p, paging.Request{Page: 1, PageSize: 50, Sort: inboxSort()})
	if err != nil {
		return err
	}
	d.Inbox = inbox
	drafts, err := h.svc.ListFor(c.UserContext(), p, core.ListQuery{Phase: core.DangSoanThao},
		paging.Request{Page: 1, PageSize: 100, Sort: listSort("-createdAt")})
	if err != nil {
		return err
	}
	for _, s := range drafts.Items {
		if s.DrafterID == p.UserID {
			d.Drafts = append(d.Drafts, s)
		}
	}
	return web.Render(c, pages, "home", "home.title", d)
}

func inboxSort() []paging.Order {
	req, _ := paging.Parse(func(string) string { return "" }, core.InboxSpec)
	return req.Sort
}

func listSort(sort string) []paging.Order {
	req, _ := paging.Parse(func(k string) string {
		if k == "sort" {
			return sort
		}
		return ""
	}, core.ListSpec)
	return req.Sort
}

// listData is the list page: the filters as sent, and the page.
type listData struct {
	Phase, ContractType, Search, Sort string
	Phases, Types                     []string
	Sorts                             []string
	Page                              paging.Page[core.Summary]
	Pager                             web.Pager
}

var sorts = []string{"-createdAt", "createdAt", "slaDeadline", "-slaDeadline", "-value", "value", "maHopDong", "title"}

func (h handlers) list(c *fiber.Ctx) error {
	d := listData{Phase: c.Query("phase"), ContractType: c.Query("contractType"), Search: c.Query("search"),
		Sort: c.Query("sort"), Phases: core.Phases, Types: core.ContractTypes, Sorts: sorts}
	req, err := httpx.ListRequest(c, core.ListSpec)
	if err == nil {
		d.Page, err = h.svc.ListFor(c.UserContext(), caller(c), core.ListQuery{Phase: d.Phase, ContractType: d.ContractType,
			SupplierID: c.Query("supplierId"), ProjectID: c.Query("projectId")}, req)
	}
	if err != nil {
		return web.RenderProblem(c, pages, "list", "contracts.list.title", d, err)
	}
	d.Pager = web.NewPager(c, d.Page)
	return web.Render(c, pages, "list", "contracts.list.title", d)
}

// formData is the new contract form as typed.
type formData struct {
	Title, ContractType, Supplier, Project, Value, Currency, Description, StartDate, EndDate string
	Bypass                                                                                   bool
	Types                                                                                    []string
}

func (h handlers) newForm(c *fiber.Ctx) error {
	return web.Render(c, pages, "new", "contracts.new.title", formData{Currency: "VND", Types: core.ContractTypes})
}

// create reads the form, finds the supplier and project by code or name
// and creates the contract as POST /api/contracts does.
func (h handlers) create(c *fiber.Ctx) error {
	f := formData{Title: c.FormValue("title"), ContractType: c.FormValue("contractType"), Supplier: c.FormValue("supplier"),
		Project: c.FormValue("project"), Value: c.FormValue("value"), Currency: c.FormValue("currency"),
		Description: c.FormValue("description"), StartDate: c.FormValue("startDate"), EndDate: c.FormValue("endDate"),
		Bypass: c.FormValue("bypass") != "", Types: core.ContractTypes}
	in := core.CreateRequest{Title: f.Title, ContractType: f.ContractType, Currency: f.Currency, Description: f.Description,
		BypassProcurementAndCCM: f.Bypass}
	fields := apperr.Fields{}
	if v, err := money.Parse(strings.ReplaceAll(strings.ReplaceAll(f.Value, ".", ""), ",", ".")); err == nil {
		in.Value = v
	} else if f.Value != "" {
		fields.Add("Value", "Must be a number with at most two decimals.")
	}
	ctx := c.UserContext()
	if id, msg := h.resolve(c, f.Supplier, h.md.SearchSupplierIDs, h.md.Suppliers); msg != "" {
		fields.Add("SupplierId", msg)
	} else {
		in.SupplierID = id
	}
	if f.Project != "" {
		if id, msg := h.resolve(c, f.Project, h.md.SearchProjectIDs, h.md.Projects); msg != "" {
			fields.Add("ProjectId", msg)
		} else {
			in.ProjectID = &id
		}
	}
	if f.StartDate != "" {
		in.StartDate = &f.StartDate
	}
	if f.EndDate != "" {
		in.EndDate = &f.EndDate
	}
	if err := fields.Err(); err != nil {
		return web.RenderProblem(c, pages, "new", "contracts.new.title", f, err)
	}
	d, err := h.svc.Create(ctx, caller(c), in)
	if err != nil {
		return web.RenderProblem(c, pages, "new", "contracts.new.title", f, err)
	}
	return web.RedirectWithFlash(c, "/contracts/"+d.ID, "contracts.flash.created")
}

// resolve finds one master-data record from what was typed: its exact code,
// or text that matches exactly one record.
func (h handlers) resolve(c *fiber.Ctx, text string, search func(ctx context.Context, text string, limit int) ([]string, error),
	refs func(ctx context.Context, ids []string) (map[string]masterdata.Ref, error)) (string, string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", web.T(c, "contracts.form.pick")
	}
	ids, err := search(c.UserContext(), text, 20)
	if err != nil || len(ids) == 0 {
		return "", web.T(c, "contracts.form.notfound")
	}
	found, err := refs(c.UserContext(), ids)
	if err != nil {
		return "", web.T(c, "contracts.form.notfound")
	}
	for id, r := range found {
		if strings.EqualFold(r.Code, text) {
			return id, ""
		}
	}
	if len(found) == 1 {
		for id := range found {
			return id, ""
		}
	}
	return "", web.T(c, "contracts.form.ambiguous")
}

// detailData is the detail page.
type detailData struct {
	core.Detail
	Comment  string // a comment typed with a move that failed
	Purposes []string
}

var purposes = []string{"ScannedSigned", "SealedCopy"}

func (h handlers) detail(c *fiber.Ctx) error {
	d, err := h.svc.Get(c.UserContext(), caller(c), c.Params("id"))
	if err != nil {
		return err
	}
	return web.Render(c, pages, "detail", "", detailData{Detail: d, Purposes: purposes})
}

// again shows the detail with a problem, read again so that a form that
// went stale shows the current state.
func (h handlers) again(c *fiber.Ctx, cause error, comment string) error {
	d, err := h.svc.Get(c.UserContext(), caller(c), c.Params("id"))
	if err != nil {
		return err
	}
	return web.RenderProblem(c, pages, "detail", "", detailData{Detail: d, Comment: comment, Purposes: purposes}, cause)
}

func (h handlers) transition(c *fiber.Ctx) error {
	in := core.TransitionRequest{ToPhase: c.FormValue("toPhase"), Comment: c.FormValue("comment")}
	if v, err := strconv.Atoi(c.FormValue("version")); err == nil {
		in.Version = &v
	}
	if _, err := h.svc.Transition(c.UserContext(), caller(c), c.Params("id"), in); err != nil {
		return h.again(c, err, in.Comment)
	}
	// A move out of the caller's inbox may take the contract out of their
	// sight: then home, where the next work waits.
	if _, err := h.svc.Get(c.UserContext(), caller(c), c.Params("id")); apperr.KindOf(err) == apperr.KindForbidden {
		return web.RedirectWithFlash(c, "/", "contracts.flash.moved")
	}
	return web.RedirectWithFlash(c, "/contracts/"+c.Params("id"), "contracts.flash.moved")
}

func (h handlers) comment(c *fiber.Ctx) error {
	content := c.FormValue("content")
	if _, err := h.svc.AddComment(c.UserContext(), caller(c), c.Params("id"), core.CommentRequest{Content: content}); err != nil {
		return h.again(c, err, content)
	}
	return web.RedirectWithFlash(c, "/contracts/"+c.Params("id")+"#comments", "contracts.flash.commented")
}

func (h handlers) upload(c *fiber.Ctx) error {
	up, err := httpx.ReadUpload(c, "file", h.maxBytes)
	if err != nil {
		return h.again(c, err, "")
	}
	purpose := ""
	if p := up.Value("purpose"); p != nil {
		purpose = *p
	}
	file := core.Upload{FileName: up.File.Filename, Size: up.File.Size, Open: func() (io.ReadCloser, error) { return up.File.Open() }}
	if _, err := h.svc.AddAttachment(c.UserContext(), caller(c), c.Params("id"), purpose, file, h.maxBytes); err != nil {
		return h.again(c, err, "")
	}
	return web.RedirectWithFlash(c, "/contracts/"+c.Params("id")+"#attachments", "contracts.flash.uploaded")
}

func (h handlers) download(c *fiber.Ctx) error {
	a, body, err := h.svc.OpenAttachment(c.UserContext(), caller(c), c.Params("id"), c.Params("attachmentId"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, a.ContentType)
	c.Set(fiber.HeaderContentDisposition, httpx.ContentDisposition(a.FileName))
	return c.SendStream(body, int(a.Size))
}

func (h handlers) draftExport(c *fiber.Ctx) error {
	if _, err := h.svc.DraftExport(c.UserContext(), caller(c), c.Params("id"), h.maxBytes); err != nil {
		return h.again(c, err, "")
	}
	return web.RedirectWithFlash(c, "/contracts/"+c.Params("id")+"#attachments", "contracts.flash.exported")
}
