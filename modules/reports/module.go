// Package reports is the reports module: the dashboard and the Excel export
// of contracts. It reads contracts only through contracts.Query.
package reports

import (
	"context"
	_ "embed"

	"github.com/contractflow/contractflow/modules/budget"
	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/modules/reports/internal/core"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
)

func init() { kernel.Register(func() kernel.Module { return &Module{} }) }

// Module is the reports module.
type Module struct{ svc *core.Service }

var (
	_ kernel.Provisioner     = (*Module)(nil)
	_ kernel.RouteProvider   = (*Module)(nil)
	_ kernel.MenuProvider    = (*Module)(nil)
	_ kernel.OpenAPIProvider = (*Module)(nil)
)

// Info names the module and what it reads.
func (*Module) Info() kernel.Info {
	return kernel.Info{Name: "reports", Requires: []string{"identity", "masterdata", "contracts"}, Uses: []string{"budget"}}
}

// Provision wires the service to the contracts query, master data and the
// directory, and to budget utilisation when the budget module is on.
func (m *Module) Provision(_ context.Context, app *kernel.App) error {
	q, err := kernel.Need[contracts.Query](app)
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
	m.svc = &core.Service{Contracts: q, MasterData: md, Directory: dir, Clock: app.Clock, Location: app.Config.Business.Location,
		Language: app.Config.Business.Language}
	if u, ok := kernel.Lookup[budget.Utilisation](app); ok {
		m.svc.Budgets = u
	}
	return nil
}

// Routes declares the dashboard and the export.
func (m *Module) Routes(r *httpx.Routes) { m.svc.Routes(r) }

// Menus declares the Dashboard and Reports menu keys with their default
// grants (DESIGN §2): every role reads the dashboard.
func (*Module) Menus() []kernel.Menu {
	return []kernel.Menu{
		{Key: "Dashboard", Title: "Dashboard", Path: "/", Order: 0, Grants: kernel.Grants{
			identity.RoleDrafter: "R", identity.RoleDeptManager: "R", identity.RoleProjectManager: "R",
			identity.RoleProcurement: "R", identity.RoleCostControl: "R", identity.RoleFinance: "R",
			identity.RoleAccounting: "R", identity.RoleEquipment: "R", identity.RoleDirector: "R",
			identity.RoleAuthorizedSigner: "R", identity.RoleHrAdmin: "R",
		}},
		{Key: "Reports", Title: "Reports", Path: "/reports", Order: 60, Grants: kernel.Grants{
			identity.RoleDrafter: "R", identity.RoleDeptManager: "R", identity.RoleProjectManager: "R",
			identity.RoleProcurement: "R", identity.RoleCostControl: "R", identity.RoleFinance: "R",
			identity.RoleAccounting: "R", identity.RoleDirector: "R", identity.RoleAuthorizedSigner: "R",
		}},
	}
}

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the report endpoints.
func (*Module) OpenAPI() []byte { return openapiFragment }
