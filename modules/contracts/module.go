package contracts

import (
	"context"
	_ "embed"
	"time"

	"github.com/contractflow/contractflow/modules/contracts/internal/core"
	"github.com/contractflow/contractflow/modules/forms"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/scheduler"
	"github.com/contractflow/contractflow/platform/search"
)

func init() { kernel.Register(func() kernel.Module { return New() }) }

// New returns an unprovisioned contracts module with default configuration.
func New() *Module { return &Module{} }

// Module is the contracts module.
type Module struct {
	svc      *core.Service
	maxBytes int64
	jobs     []scheduler.Job
}

var (
	_ kernel.Migrator        = (*Module)(nil)
	_ kernel.Provisioner     = (*Module)(nil)
	_ kernel.RouteProvider   = (*Module)(nil)
	_ kernel.MenuProvider    = (*Module)(nil)
	_ kernel.EventDeclarer   = (*Module)(nil)
	_ kernel.OpenAPIProvider = (*Module)(nil)
	_ kernel.JobProvider     = (*Module)(nil)
	_ Query                  = (*core.Service)(nil)
)

// Info names the module and what it needs.
func (*Module) Info() kernel.Info {
	return kernel.Info{Name: "contracts", Requires: []string{"identity", "masterdata", "workflowdesigner"}, Uses: []string{"forms"}}
}

// Migrations creates the contract tables.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision wires the service to the workflow runtime, master data and the
// directory, registers the contract kind with its code hook and vetoes
// deleting master data that live contracts use.
func (m *Module) Provision(ctx context.Context, app *kernel.App) error {
	wf, err := kernel.Need[workflowdesigner.Engine](app)
	if err != nil {
		return err
	}
	md, err := kernel.Need[masterdata.Lookup](app)
	if err != nil {
		return err
	}
	dir, err := kernel.Need[identity.Directory](app)
	if err != nil {
		return err
	}
	m.maxBytes = int64(app.Config.Uploads.MaxBytes)
	// The trigram index by phase serves every contract search on SQLite;
	// the table's own index, which every create and edit wrote in its
	// commit, is gone.
	if err := search.DropIndexes(ctx, app.DB, "contracts"); err != nil {
		return err
	}
	parts, err := search.EnsurePartitioned(ctx, app.DB, "contracts", "phase")
	if err != nil {
		return err
	}
	if parts != nil {
		m.jobs = []scheduler.Job{{Name: "contracts.search", Interval: searchSyncInterval,
			Run: func(ctx context.Context) error { return parts.Sync(ctx) }}}
	}
	deps := core.Deps{SearchParts: parts, DB: app.DB, Clock: app.Clock, Log: app.Log, Bus: app.Bus, Blobs: app.Blobs,
		Workflows: wf, MasterData: md, Directory: dir, Location: app.Config.Business.Location}
	if r, ok := kernel.Lookup[forms.Renderer](app); ok {
		deps.Renderer = renderer{r}
	}
	if t, ok := kernel.Lookup[forms.Templates](app); ok {
		deps.Templates = t
	}
	m.svc = core.New(deps)
	wf.RegisterKind(m.svc.Kind())
	wf.Hook(core.KindName, m.svc.AssignCode)
	app.Bus.Subscribe(masterdata.TopicDeleted, events.InTx, m.svc.VetoMasterDataDelete)
	kernel.Provide[Query](app, m.svc)
	kernel.Provide[Drafts](app, drafts{m.svc})
	return nil
}

// searchSyncInterval is how often the search index by phase files the
// contracts changed since: searches check those by their own text, so a
// shorter interval keeps that set small, a longer one batches more moves
// into one write of the index.
const searchSyncInterval = 250 * time.Millisecond

// Jobs files the changed contracts in the search index by phase (SQLite
// with FTS5; none elsewhere).
func (m *Module) Jobs() []scheduler.Job { return m.jobs }

// Routes declares the contract endpoints.
func (m *Module) Routes(r *httpx.Routes) { m.svc.Routes(r, m.maxBytes) }

// Menus declares the Contracts menu key with its default grants (DESIGN §2).
func (*Module) Menus() []kernel.Menu {
	return []kernel.Menu{{Key: "Contracts", Title: "Contracts", Path: "/contracts", Order: 10, Grants: kernel.Grants{
		identity.RoleDrafter: "CRUD", identity.RoleDeptManager: "CRUD", identity.RoleProjectManager: "R",
		identity.RoleProcurement: "R", identity.RoleCostControl: "R", identity.RoleFinance: "R",
		identity.RoleAccounting: "R", identity.RoleEquipment: "R", identity.RoleDirector: "R",
		identity.RoleAuthorizedSigner: "R", identity.RoleHrAdmin: "RU",
	}}}
}

// Events lists the topics the module publishes and consumes.
func (*Module) Events() kernel.Events {
	return kernel.Events{
		Publishes: []string{core.TopicCreated, core.TopicUpdated, core.TopicTransitioned, core.TopicDeleted, core.TopicCommented, core.TopicSLAWarning},
		Consumes:  []string{masterdata.TopicDeleted},
	}
}

// renderer adapts the forms module's Renderer to the draft export.
type renderer struct{ forms.Renderer }

func (r renderer) Render(ctx context.Context, templateID string, data map[string]any) (core.Rendered, error) {
	doc, err := r.RenderTemplate(ctx, templateID, data)
	return core.Rendered{FileName: doc.FileName, ContentType: doc.ContentType, Body: doc.Body, Unfilled: doc.Unfilled}, err
}

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the contract endpoints.
func (*Module) OpenAPI() []byte { return openapiFragment }
