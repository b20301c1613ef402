package procurement

import (
	"context"
	_ "embed"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/modules/procurement/internal/core"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/search"
)

func init() { kernel.Register(func() kernel.Module { return New() }) }

// New returns an unprovisioned procurement module with default configuration.
func New() *Module { return &Module{cfg: core.DefaultConfig()} }

// Module is the procurement module.
type Module struct {
	cfg *core.Config
	svc *core.Service
}

var (
	_ kernel.Configurer        = (*Module)(nil)
	_ kernel.Migrator          = (*Module)(nil)
	_ kernel.Provisioner       = (*Module)(nil)
	_ kernel.RouteProvider     = (*Module)(nil)
	_ kernel.MenuProvider      = (*Module)(nil)
	_ kernel.Seeder            = (*Module)(nil)
	_ kernel.EventDeclarer     = (*Module)(nil)
	_ kernel.OpenAPIProvider   = (*Module)(nil)
	_ masterdata.SupplierFacts = (*core.Service)(nil)
)

// Info names the module and what it needs. Contracts is required, not
// merely used: an approved evaluation's contract is drafted through it, so
// switching contracts off means switching procurement off too.
func (*Module) Info() kernel.Info {
	return kernel.Info{Name: "procurement", Requires: []string{"identity", "masterdata", "workflowdesigner", "contracts"}}
}

// ConfigSection owns the procurement.* keys.
func (m *Module) ConfigSection() (string, any) { return "procurement", m.cfg }

// Migrations creates the evaluation tables.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision checks the configuration, wires the service to the workflow
// runtime, master data, the directory and contracts, registers the
// evaluation kind and its hook, shows the supplier's standing on master
// data's supplier and vetoes deleting master data live evaluations use.
func (m *Module) Provision(ctx context.Context, app *kernel.App) error {
	if err := m.cfg.Validate(); err != nil {
		return err
	}
	wf, err := kernel.Need[workflowdesigner.Engine](app)
	if err != nil {
		return err
	}
	md, err := kernel.Need[masterdata.Lookup](app)
	if err != nil {
		return err
	}
	facts, err := kernel.Need[masterdata.SupplierFactsRegistry](app)
	if err != nil {
		return err
	}
	dir, err := kernel.Need[identity.Directory](app)
	if err != nil {
		return err
	}
	drafts, err := kernel.Need[contracts.Drafts](app)
	if err != nil {
		return err
	}
	indexed, err := search.EnsureIndexes(ctx, app.DB, app.Log, "purchase_evaluations")
	if err != nil {
		return err
	}
	m.svc = core.New(core.Deps{DB: app.DB, Clock: app.Clock, Log: app.Log, Bus: app.Bus, Workflows: wf, MasterData: md,
		Directory: dir, Contracts: drafts, Config: m.cfg, Location: app.Config.Business.Location,
		SearchIndexed: indexed["purchase_evaluations"]})
	wf.RegisterKind(m.svc.Kind())
	wf.Hook(core.KindName, m.svc.MarkApproved)
	facts.AddSupplierFacts(m.svc)
	app.Bus.Subscribe(masterdata.TopicDeleted, events.InTx, m.svc.VetoMasterDataDelete)
	return nil
}

// Routes declares the evaluation endpoints.
func (m *Module) Routes(r *httpx.Routes) { m.svc.Routes(r) }

// Menus declares the PurchaseEvaluations menu key with its default grants (DESIGN §2).
func (*Module) Menus() []kernel.Menu {
	return []kernel.Menu{{Key: "PurchaseEvaluations", Title: "Purchase evaluations", Path: "/purchase-evaluations", Order: 20,
		Grants: kernel.Grants{
			identity.RoleDrafter: "CRU", identity.RoleDeptManager: "RU", identity.RoleProjectManager: "RU",
			identity.RoleProcurement: "CRUD", identity.RoleCostControl: "RU", identity.RoleFinance: "RU",
			identity.RoleAccounting: "RU", identity.RoleEquipment: "RU", identity.RoleDirector: "RU",
		}}}
}

// Seed adds the demo evaluations when seed.demo is on.
func (m *Module) Seed(ctx context.Context, app *kernel.App) error {
	if !app.Config.Seed.Demo {
		return nil
	}
	return m.svc.SeedDemo(ctx)
}

// Events lists the topics the module publishes and consumes.
func (*Module) Events() kernel.Events {
	return kernel.Events{
		Publishes: []string{core.TopicTransitioned, core.TopicOpinionSaved, core.TopicSLAWarning},
		Consumes:  []string{masterdata.TopicDeleted},
	}
}

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the evaluation endpoints.
func (*Module) OpenAPI() []byte { return openapiFragment }
