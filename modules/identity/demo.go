package identity

import (
	"context"

	"github.com/contractflow/contractflow/modules/identity/internal/core"
	"github.com/contractflow/contractflow/platform/kernel"
)

var _ kernel.DemoSeeder = (*Module)(nil)

// SeedDemoSet adds the bulk demo users (contractflow seed --demo-size).
func (m *Module) SeedDemoSet(ctx context.Context, _ *kernel.App, set *kernel.DemoSet) error {
	return m.svc.SeedDemoSet(ctx, set)
}

// DemoEmail is the address of the n-th bulk demo user of role (n from 0).
func DemoEmail(role string, n int) string { return core.DemoEmail(role, n) }
