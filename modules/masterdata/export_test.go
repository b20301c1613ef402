package masterdata

import "github.com/contractflow/contractflow/modules/masterdata/internal/core"

// Core exposes the provisioned service to the module's own tests (the
// benchmark bulk-loads suppliers through it).
func (m *Module) Core() *core.Service { return m.svc }
