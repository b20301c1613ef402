package forms

import (
	"context"
	_ "embed"

	"github.com/contractflow/contractflow/modules/forms/internal/core"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
)

func init() { kernel.Register(func() kernel.Module { return New() }) }

// New returns an unprovisioned forms module.
func New() *Module { return &Module{} }

// Module is the forms module: contract templates, their upload and their
// rendering. It provides Renderer and Templates to the modules that require
// it (contracts, for the draft export).
type Module struct {
	svc *core.Service
}

var (
	_ kernel.Migrator        = (*Module)(nil)
	_ kernel.Provisioner     = (*Module)(nil)
	_ kernel.RouteProvider   = (*Module)(nil)
	_ kernel.MenuProvider    = (*Module)(nil)
	_ kernel.Seeder          = (*Module)(nil)
	_ kernel.OpenAPIProvider = (*Module)(nil)
	_ Renderer               = (*core.Service)(nil)
	_ Templates              = (*core.Service)(nil)
)

// Info names the module; its routes need identity's guard.
func (*Module) Info() kernel.Info { return kernel.Info{Name: "forms", Requires: []string{"identity"}} }

// Migrations creates contract_templates.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision builds the service and provides the renderer and the template
// lookup.
func (m *Module) Provision(_ context.Context, app *kernel.App) error {
	m.svc = core.New(app)
	kernel.Provide[Renderer](app, m.svc)
	kernel.Provide[Templates](app, m.svc)
	return nil
}

// Routes declares the template endpoints.
func (m *Module) Routes(r *httpx.Routes) { m.svc.Routes(r) }

// Menus declares the Forms menu key, under Contracts, with its default
// grants (DESIGN §2).
func (*Module) Menus() []kernel.Menu {
	return []kernel.Menu{{Key: "Forms", Title: "Forms", Path: "/contracts/forms", ParentKey: "Contracts", Order: 30,
		Grants: kernel.Grants{identity.RoleDrafter: "R", identity.RoleDeptManager: "R"}}}
}

// Seed inserts the eight templates every installation starts with and
// copies their files into blob storage.
func (m *Module) Seed(ctx context.Context, _ *kernel.App) error { return m.svc.Seed(ctx) }

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the module's endpoints.
func (*Module) OpenAPI() []byte { return openapiFragment }
