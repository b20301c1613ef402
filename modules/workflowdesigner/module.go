package workflowdesigner

import (
	"context"
	"fmt"
	"io"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/core"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/runtime"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/scheduler"
)

func init() { kernel.Register(func() kernel.Module { return New() }) }

// New returns an unprovisioned workflow module with default configuration.
func New() *Module { return &Module{cfg: runtime.DefaultConfig()} }

// Module is the workflow designer: versioned definitions as data, and the
// runtime contracts and purchase evaluations move on.
type Module struct {
	cfg *runtime.Config
	svc *core.Service
	rt  *runtime.Runtime
}

var (
	_ kernel.Configurer      = (*Module)(nil)
	_ kernel.Migrator        = (*Module)(nil)
	_ kernel.Provisioner     = (*Module)(nil)
	_ kernel.MenuProvider    = (*Module)(nil)
	_ kernel.Seeder          = (*Module)(nil)
	_ kernel.JobProvider     = (*Module)(nil)
	_ kernel.CommandProvider = (*Module)(nil)
	_ Engine                 = (*runtime.Runtime)(nil)
)

// Info names the module.
func (*Module) Info() kernel.Info {
	return kernel.Info{Name: "workflowdesigner", Requires: []string{"identity"}}
}

// ConfigSection owns the sla.* keys: the one SLA job is the runtime's.
func (m *Module) ConfigSection() (string, any) { return "sla", m.cfg }

// Migrations creates the definition tables.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision builds the definitions service and the runtime and provides
// the runtime as the Engine.
func (m *Module) Provision(_ context.Context, app *kernel.App) error {
	if err := m.cfg.Validate(); err != nil {
		return err
	}
	cal, err := app.Config.Calendar(m.cfg.Calendar)
	if err != nil {
		return err
	}
	m.svc = core.New(app.DB, app.Clock, app.Caches)
	m.rt = runtime.New(m.svc, app.DB, app.Clock, app.Log, app.Bus, *m.cfg, cal)
	kernel.Provide[Engine](app, m.rt)
	return nil
}

// Menus declares the Workflows menu key.
func (*Module) Menus() []kernel.Menu {
	// No grants: by default only Admin, who passes every policy, has it (DESIGN §2).
	return []kernel.Menu{{Key: "Workflows", Title: "Workflows", Path: "/workflows", Order: 120}}
}

// Seed creates the registered kinds' default definitions and assignments
// and makes sure each kind's documents are counted.
func (m *Module) Seed(ctx context.Context, _ *kernel.App) error {
	kinds := m.rt.Kinds()
	declared := make([]engine.Kind, len(kinds))
	for i, k := range kinds {
		declared[i] = k.Declared()
	}
	if err := m.svc.Seed(ctx, declared); err != nil {
		return err
	}
	return m.rt.EnsureCounters(ctx)
}

// Jobs runs the one SLA job of every registered kind.
func (m *Module) Jobs() []scheduler.Job {
	return []scheduler.Job{{Name: runtime.JobName, Interval: m.cfg.JobInterval, FirstDelay: m.cfg.FirstRunDelay, Run: m.rt.RunSLA}}
}

// Commands adds "audit verify", which checks every document's hash-chained
// history and exits non-zero naming the first row that no longer matches.
func (m *Module) Commands() []kernel.Command {
	return []kernel.Command{{Name: "audit verify", Usage: "check every document's history chain",
		Run: func(ctx context.Context, _ *kernel.App, _ []string, out io.Writer) error {
			n, broken, err := m.rt.Verify(ctx, out)
			if err != nil {
				return err
			}
			if broken != nil {
				return fmt.Errorf("audit: %d rows read; the first break: %w", n, broken)
			}
			fmt.Fprintf(out, "audit: %d history rows verified, every chain holds\n", n)
			return nil
		}}}
}
