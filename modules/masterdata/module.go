package masterdata

import (
	"context"
	_ "embed"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata/internal/core"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
)

func init() { kernel.Register(func() kernel.Module { return New() }) }

// New returns an unprovisioned masterdata module.
func New() *Module { return &Module{} }

// Module is the masterdata module: suppliers, projects and departments.
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
	_ Lookup                 = (*core.Service)(nil)
	_ SupplierFactsRegistry  = (*core.Service)(nil)
)

// Info names the module; it needs identity to check manager ids.
func (*Module) Info() kernel.Info {
	return kernel.Info{Name: "masterdata", Requires: []string{"identity"}}
}

// Migrations creates the three tables and their indexes.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision builds the service and provides Lookup and the registry of
// other modules' supplier facts.
func (m *Module) Provision(ctx context.Context, app *kernel.App) error {
	users, err := kernel.Need[identity.Directory](app)
	if err != nil {
		return err
	}
	if m.svc, err = core.New(ctx, app, users); err != nil {
		return err
	}
	kernel.Provide[Lookup](app, m.svc)
	kernel.Provide[SupplierFactsRegistry](app, m.svc)
	return nil
}

// Routes declares the endpoints under /api/suppliers, /api/projects and
// /api/departments.
func (m *Module) Routes(r *httpx.Routes) { m.svc.Routes(r) }

// Menus declares the Suppliers, Projects and Departments menu keys.
func (*Module) Menus() []kernel.Menu { return core.Menus() }

// Seed adds the demo records when seed.demo is on.
func (m *Module) Seed(ctx context.Context, app *kernel.App) error {
	if !app.Config.Seed.Demo {
		return nil
	}
	return m.svc.SeedDemo(ctx)
}

// Events declares the delete event other modules may veto.
func (*Module) Events() kernel.Events { return kernel.Events{Publishes: []string{TopicDeleted}} }

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the module's endpoints.
func (*Module) OpenAPI() []byte { return openapiFragment }
