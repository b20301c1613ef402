package workflowdesigner

import (
	"context"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/core"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
)

func init() { kernel.Register(func() kernel.Module { return &Module{} }) }

// Module is the workflow designer: versioned definitions as data, and the
// engine contracts and purchase evaluations move on.
type Module struct{ svc *core.Service }

var (
	_ kernel.Migrator     = (*Module)(nil)
	_ kernel.Provisioner  = (*Module)(nil)
	_ kernel.MenuProvider = (*Module)(nil)
	_ kernel.Seeder       = (*Module)(nil)
	_ Engine              = (*core.Service)(nil)
)

// Info names the module.
func (*Module) Info() kernel.Info {
	return kernel.Info{Name: "workflowdesigner", Requires: []string{"identity"}}
}

// Migrations creates the definition tables.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision builds the engine and provides it.
func (m *Module) Provision(_ context.Context, app *kernel.App) error {
	m.svc = core.New(app.DB, app.Clock)
	kernel.Provide[Engine](app, m.svc)
	return nil
}

// Menus declares the Workflows menu key.
func (*Module) Menus() []kernel.Menu {
	return []kernel.Menu{{Key: "Workflows", Title: "Workflows", Path: "/workflows", Order: 120}}
}

// Seed creates the registered kinds' default definitions and assignments.
func (m *Module) Seed(ctx context.Context, _ *kernel.App) error { return m.svc.Seed(ctx) }
