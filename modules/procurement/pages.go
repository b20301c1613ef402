package procurement

import (
	procurementweb "github.com/contractflow/contractflow/modules/procurement/internal/web"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/web"
)

var _ kernel.PageProvider = (*Module)(nil)

// Pages declares the purchase evaluation pages (docs/web.md).
func (m *Module) Pages(p *web.Pages) { procurementweb.Register(p, m.svc) }
