// Package web is the workflow administration pages (DESIGN §12, §4.1,
// docs/web.md): definitions, a drawing of each, draft editing, validate,
// publish, assignments and in-flight migration. Every page calls the same
// Designer and Runtime methods as the API, behind the same Workflows.*
// policies; the rules stay there.
package web

import (
	"context"
	"embed"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/core"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/runtime"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/web"
)

//go:embed templates
var files embed.FS

var pages = web.MustTemplates(files, "templates/*.html")

// Migrations is the runtime's in-flight side, as the API's migration
// endpoints use it.
type Migrations interface {
	InFlight(ctx context.Context, id string) (runtime.InFlight, error)
	Migrate(ctx context.Context, by authn.Principal, id, toID string, dryRun bool) (runtime.InFlight, error)
}

// Register declares the workflow administration pages. kinds lists the
// registered document kinds as definitions are validated against them.
func Register(p *web.Pages, d *core.Designer, m Migrations, kinds func() []engine.Kind) {
	h := handlers{d: d, m: m, kinds: kinds}
	// The assignments come first: /admin/workflows/:id would take them.
	p.Get("/admin/workflows/assignments", httpx.Require("Workflows.Read"), h.assignments)
	p.Post("/admin/workflows/assignments", httpx.Require("Workflows.Update"), h.assign)
	p.Get("/admin/workflows", httpx.Require("Workflows.Read"), h.list)
	p.Post("/admin/workflows", httpx.Require("Workflows.Create"), h.create)
	p.Get("/admin/workflows/:id", httpx.Require("Workflows.Read"), h.detail)
	p.Get("/admin/workflows/:id/edit", httpx.Require("Workflows.Update"), h.edit)
	p.Post("/admin/workflows/:id", httpx.Require("Workflows.Update"), h.save)
	// Validating changes nothing, so reading definitions is enough (as the API).
	p.Post("/admin/workflows/:id/validate", httpx.Require("Workflows.Read"), h.validate)
	p.Post("/admin/workflows/:id/publish", httpx.Require("Workflows.Update"), h.publish)
	p.Post("/admin/workflows/:id/delete", httpx.Require("Workflows.Delete"), h.remove)
	p.Post("/admin/workflows/:id/migrate", httpx.Require("Workflows.Update"), h.migrate)
	p.Menu(web.MenuEntry{Key: "Workflows", Path: "/admin/workflows", Label: "menu.workflows"})
	for lang, m := range messages {
		p.Messages(lang, m)
	}
}

type handlers struct {
	d     *core.Designer
	m     Migrations
	kinds func() []engine.Kind
}

func (h handlers) kind(name string) engine.Kind {
	for _, k := range h.kinds() {
		if k.Name == name {
			return k
		}
	}
	return engine.Kind{Name: name}
}

func (h handlers) kindNames() []string {
	var names []string
	for _, k := range h.kinds() {
		names = append(names, k.Name)
	}
	return names
}

// --- list and create ---

type listData struct {
	Kind   string
	Kinds  []string
	Defs   []core.DefinitionDTO
	All    []core.DefinitionDTO // what a new draft may copy
	Create createForm
}

type createForm struct{ DocumentKind, Key, Name, FromID string }

func (h handlers) list(c *fiber.Ctx) error {
	data, err := h.listData(c, createForm{})
	if err != nil {
		return err
	}
	return web.Render(c, pages, "list", "wf.title", data)
}

func (h handlers) listData(c *fiber.Ctx, f createForm) (*listData, error) {
	kind := c.Query("documentKind")
	defs, err := h.d.List(c.UserContext(), kind)
	if err != nil {
		return nil, err
	}
	all := defs
	if kind != "" {
		if all, err = h.d.List(c.UserContext(), ""); err != nil {
			return nil, err
		}
	}
	return &listData{Kind: kind, Kinds: h.kindNames(), Defs: defs, All: all, Create: f}, nil
}

// create makes a draft, empty or a copy of another definition, and opens it.
func (h handlers) create(c *fiber.Ctx) error {
	f := createForm{DocumentKind: c.FormValue("documentKind"), Key: c.FormValue("key"), Name: c.FormValue("name"), FromID: c.FormValue("fromId")}
	in := core.CreateRequest{DocumentKind: f.DocumentKind, Key: f.Key, Name: f.Name}
	if f.FromID != "" {
		in.FromID = &f.FromID
	}
	def, err := h.d.Create(c.UserContext(), authn.Caller(c.UserContext()), in)
	if err != nil {
		data, lerr := h.listData(c, f)
		if lerr != nil {
			return lerr
		}
		return web.RenderProblem(c, pages, "list", "wf.title", data, err)
	}
	return web.RedirectWithFlash(c, "/admin/workflows/"+def.ID, "wf.flash.created")
}

// --- detail, validate, publish, delete, migrate ---

type detailData struct {
	Def        core.DefinitionDTO
	Drawing    drawing
	Steps      []stepRow
	Moves      []moveRow
	Assigned   []string // the document types whose new documents pin it
	Validation *validation
	InFlight   *runtime.InFlight
	Targets    []core.DefinitionDTO // published definitions of the kind it may migrate to
	Target     string
	Plan       *runtime.InFlight // a dry run's answer
	PlanRows   []planRow
	PlanOK     bool // every phase of the plan has a step in the target
}

type planRow struct {
	Phase  string
	Count  int64
	Mapped bool
}

type stepRow struct {
	core.StepDTO
	Problems []problem
}

type moveRow struct {
	core.TransitionDTO
	N        int
	Problems []problem
}

// validation is validate's answer, or publish's refusal, for the page.
type validation struct {
	Valid    bool
	Problems []problem
}

// problem is one of the designer's validation problems: its code (shown in
// words from the messages wf.problem.<code>) and where it is.
type problem struct {
	engine.Problem
}

// Where says which step or move the problem is in, in words.
func (p problem) Where(v *web.View) string {
	switch {
	case p.From != "" || p.To != "":
		return v.T("wf.where.move", v.Phase(p.From), v.Phase(p.To))
	case p.Phase != "":
		return v.T("wf.where.step", v.Phase(p.Phase))
	}
	return ""
}

func (h handlers) detail(c *fiber.Ctx) error {
	data, err := h.detailData(c, nil)
	if err != nil {
		return err
	}
	return web.Render(c, pages, "detail", "wf.detail.title", data)
}

// detailData reads the definition and what the page shows around it; v is
// a validation to show (with the faulty steps and moves marked).
func (h handlers) detailData(c *fiber.Ctx, v *validation) (*detailData, error) {
	ctx := c.UserContext()
	def, err := h.d.Get(ctx, c.Params("id"))
	if err != nil {
		return nil, err
	}
	data := &detailData{Def: def, Validation: v}
	badPhase, badMove := map[string]bool{}, map[[2]string]bool{}
	var problems []problem
	if v != nil {
		problems = v.Problems
	}
	for _, p := range problems {
		switch {
		case p.From != "" || p.To != "":
			badMove[[2]string{p.From, p.To}] = true
		case p.Phase != "":
			badPhase[p.Phase] = true
		}
	}
	data.Drawing = draw(def, badPhase, badMove)
	for _, s := range def.Steps {
		r := stepRow{StepDTO: s}
		for _, p := range problems {
			if p.Phase == s.Phase && p.From == "" && p.To == "" {
				r.Problems = append(r.Problems, p)
			}
		}
		data.Steps = append(data.Steps, r)
	}
	for i, t := range def.Transitions {
		r := moveRow{TransitionDTO: t, N: i + 1}
		for _, p := range problems {
			if p.From == t.From && p.To == t.To && (p.From != "" || p.To != "") {
				r.Problems = append(r.Problems, p)
			}
		}
		data.Moves = append(data.Moves, r)
	}
	assignments, err := h.d.Assignments(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range assignments {
		if a.WorkflowDefinitionID != nil && *a.WorkflowDefinitionID == def.ID {
			data.Assigned = append(data.Assigned, a.DocumentType)
		}
	}
	if def.Status == core.StatusPublished {
		inFlight, err := h.m.InFlight(ctx, def.ID)
		if err != nil {
			return nil, err
		}
		data.InFlight = &inFlight
		same, err := h.d.List(ctx, def.DocumentKind)
		if err != nil {
			return nil, err
		}
		for _, o := range same {
			if o.Status == core.StatusPublished && o.ID != def.ID {
				data.Targets = append(data.Targets, o)
			}
		}
	}
	return data, nil
}

// problemsOf are the validation problems as the page lists them.
func problemsOf(ps []engine.Problem) []problem {
	out := make([]problem, len(ps))
	for i, p := range ps {
		out[i] = problem{p}
	}
	return out
}

func (h handlers) validate(c *fiber.Ctx) error {
	res, err := h.d.Validate(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	data, err := h.detailData(c, &validation{Valid: res.Valid, Problems: problemsOf(res.Problems)})
	if err != nil {
		return err
	}
	return web.Render(c, pages, "detail", "wf.detail.title", data)
}

// publish makes the draft the immutable version; a refusal lists the
// problems in words and marks them on the drawing.
func (h handlers) publish(c *fiber.Ctx) error {
	_, err := h.d.Publish(c.UserContext(), authn.Caller(c.UserContext()), c.Params("id"))
	if err == nil {
		return web.RedirectWithFlash(c, "/admin/workflows/"+c.Params("id"), "wf.flash.published")
	}
	var v *validation
	if ae, ok := apperr.As(err); ok {
		if ps, ok := ae.Extra["problems"].(engine.Problems); ok {
			v = &validation{Problems: problemsOf(ps)}
			// The problems are listed in words below; the field messages
			// would repeat them in the service's English.
			plain := *ae
			plain.Fields = nil
			err = &plain
		}
	}
	data, derr := h.detailData(c, v)
	if derr != nil {
		return derr
	}
	return web.RenderProblem(c, pages, "detail", "wf.detail.title", data, err)
}

func (h handlers) remove(c *fiber.Ctx) error {
	if err := h.d.Delete(c.UserContext(), c.Params("id")); err != nil {
		data, derr := h.detailData(c, nil)
		if derr != nil {
			return derr
		}
		return web.RenderProblem(c, pages, "detail", "wf.detail.title", data, err)
	}
	return web.RedirectWithFlash(c, "/admin/workflows", "wf.flash.deleted")
}

// migrate runs the in-flight migration: a dry run shows its plan (and then
// offers the real one); the real one moves the documents.
func (h handlers) migrate(c *fiber.Ctx) error {
	in := runtime.MigrateRequest{ToDefinitionID: c.FormValue("toDefinitionId"), DryRun: c.FormValue("dryRun") != "false"}
	err := httpx.Validate(in)
	var plan runtime.InFlight
	if err == nil {
		plan, err = h.m.Migrate(c.UserContext(), authn.Caller(c.UserContext()), c.Params("id"), in.ToDefinitionID, in.DryRun)
	}
	if err == nil && !in.DryRun {
		return web.RedirectWithFlash(c, "/admin/workflows/"+c.Params("id"), "wf.flash.migrated")
	}
	data, derr := h.detailData(c, nil)
	if derr != nil {
		return derr
	}
	data.Target = in.ToDefinitionID
	if err != nil {
		return web.RenderProblem(c, pages, "detail", "wf.detail.title", data, err)
	}
	data.Plan, data.PlanOK = &plan, plan.Total > 0
	for _, p := range plan.ByPhase {
		r := planRow{Phase: p.Phase, Count: p.Count, Mapped: p.Mapped != nil && *p.Mapped}
		data.PlanOK = data.PlanOK && r.Mapped
		data.PlanRows = append(data.PlanRows, r)
	}
	return web.Render(c, pages, "detail", "wf.detail.title", data)
}

// --- assignments ---

type assignmentsData struct {
	Rows   []assignRow
	Posted string // the document type of a refused form, whose row shows the problem
}

type assignRow struct {
	core.AssignmentDTO
	Kind    string
	Options []core.DefinitionDTO // the published definitions of its kind
}

func (h handlers) assignments(c *fiber.Ctx) error {
	data, err := h.assignmentsData(c)
	if err != nil {
		return err
	}
	return web.Render(c, pages, "assignments", "wf.assignments.title", data)
}

func (h handlers) assignmentsData(c *fiber.Ctx) (*assignmentsData, error) {
	ctx := c.UserContext()
	list, err := h.d.Assignments(ctx)
	if err != nil {
		return nil, err
	}
	defs, err := h.d.List(ctx, "")
	if err != nil {
		return nil, err
	}
	data := &assignmentsData{}
	for _, a := range list {
		r := assignRow{AssignmentDTO: a}
		for _, k := range h.kinds() {
			if slices.Contains(k.DocumentTypes, a.DocumentType) {
				r.Kind = k.Name
			}
		}
		for _, d := range defs {
			if d.Status == core.StatusPublished && d.DocumentKind == r.Kind {
				r.Options = append(r.Options, d)
			}
		}
		data.Rows = append(data.Rows, r)
	}
	return data, nil
}

func (h handlers) assign(c *fiber.Ctx) error {
	in := core.AssignRequest{DocumentType: c.FormValue("documentType"), WorkflowDefinitionID: c.FormValue("workflowDefinitionId")}
	if _, err := h.d.Assign(c.UserContext(), authn.Caller(c.UserContext()), in); err != nil {
		data, derr := h.assignmentsData(c)
		if derr != nil {
			return derr
		}
		data.Posted = in.DocumentType
		return web.RenderProblem(c, pages, "assignments", "wf.assignments.title", data, err)
	}
	return web.RedirectWithFlash(c, "/admin/workflows/assignments", "wf.flash.assigned")
}

// roles are the roles a step's inbox or a move may name.
func roles() []string { return identity.Roles() }
