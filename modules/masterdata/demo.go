package masterdata

import (
	"context"

	"github.com/contractflow/contractflow/platform/kernel"
)

var _ kernel.DemoSeeder = (*Module)(nil)

// SeedDemoSet adds the bulk demo suppliers, projects and departments
// (contractflow seed --demo-size).
func (m *Module) SeedDemoSet(ctx context.Context, _ *kernel.App, set *kernel.DemoSet) error {
	return m.svc.SeedDemoSet(ctx, set)
}
