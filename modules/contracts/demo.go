package contracts

import (
	"context"

	"github.com/contractflow/contractflow/platform/kernel"
)

var _ kernel.DemoSeeder = (*Module)(nil)

// SeedDemoSet adds the bulk demo contracts with their approval history and
// comments (contractflow seed --demo-size).
func (m *Module) SeedDemoSet(ctx context.Context, _ *kernel.App, set *kernel.DemoSet) error {
	return m.svc.SeedDemoSet(ctx, set)
}
