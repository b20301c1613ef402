package budget

import (
	"context"
	_ "embed"

	"github.com/contractflow/contractflow/modules/budget/internal/core"
	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
)

func init() { kernel.Register(func() kernel.Module { return New() }) }

// New returns an unprovisioned budget module.
func New() *Module { return &Module{} }

// Module is the budget module.
type Module struct {
	svc *core.Service
}

var (
	_ kernel.Migrator        = (*Module)(nil)
	_ kernel.Provisioner     = (*Module)(nil)
	_ kernel.RouteProvider   = (*Module)(nil)
	_ kernel.MenuProvider    = (*Module)(nil)
	_ kernel.Seeder          = (*Module)(nil)
	_ kernel.EventDeclarer   = (*Module)(nil)
	_ kernel.OpenAPIProvider = (*Module)(nil)
	_ Utilisation            = (*core.Service)(nil)
)

// Info names the module: it checks projects through master data and hooks
// the contracts' moves on the workflow runtime.
func (*Module) Info() kernel.Info {
	return kernel.Info{Name: "budget", Requires: []string{"identity", "masterdata", "contracts", "workflowdesigner"}}
}

// Migrations creates the four budget tables.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision builds the service, hooks contract moves (reserve, commit,
// release), checks the budgetLineId of contracts being drafted or edited,
// releases what a deleted contract held, and provides Utilisation.
func (m *Module) Provision(ctx context.Context, app *kernel.App) error {
	wf, err := kernel.Need[workflowdesigner.Engine](app)
	if err != nil {
		return err
	}
	md, err := kernel.Need[masterdata.Lookup](app)
	if err != nil {
		return err
	}
	m.svc = core.New(core.Deps{DB: app.DB, Clock: app.Clock, Bus: app.Bus, MasterData: md, Location: app.Config.Business.Location})
	wf.Hook(contracts.KindName, m.svc.OnContractMove)
	app.Bus.Subscribe(contracts.TopicCreated, events.InTx, m.svc.CheckContractLine)
	app.Bus.Subscribe(contracts.TopicUpdated, events.InTx, m.svc.CheckContractLine)
	app.Bus.Subscribe(contracts.TopicDeleted, events.InTx, m.svc.ReleaseDeletedContract)
	kernel.Provide[Utilisation](app, m.svc)
	return nil
}

// Routes declares the eleven budget endpoints.
func (m *Module) Routes(r *httpx.Routes) { m.svc.Routes(r) }

// Menus declares the Budgets menu key with its default grants (DESIGN §2).
func (*Module) Menus() []kernel.Menu {
	return []kernel.Menu{{Key: "Budgets", Title: "Budgets", Path: "/budgets", Order: 40, Grants: kernel.Grants{
		identity.RoleDeptManager: "R", identity.RoleProjectManager: "CRU", identity.RoleCostControl: "CRU",
		identity.RoleFinance: "R", identity.RoleAccounting: "R", identity.RoleDirector: "RU",
	}}}
}

// Seed adds a demo budget per demo project when seed.demo is on.
func (m *Module) Seed(ctx context.Context, app *kernel.App) error {
	if !app.Config.Seed.Demo {
		return nil
	}
	return m.svc.SeedDemo(ctx)
}

// Events lists the topics the module publishes and consumes.
func (*Module) Events() kernel.Events {
	return kernel.Events{
		Publishes: []string{core.TopicOverdrawn},
		Consumes:  []string{contracts.TopicCreated, contracts.TopicUpdated, contracts.TopicDeleted},
	}
}

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the budget endpoints.
func (*Module) OpenAPI() []byte { return openapiFragment }
