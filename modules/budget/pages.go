package budget

import (
	budgetweb "github.com/contractflow/contractflow/modules/budget/internal/web"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/web"
)

var _ kernel.PageProvider = (*Module)(nil)

// Pages declares the budget pages (docs/web.md).
func (m *Module) Pages(p *web.Pages) { budgetweb.Register(p, m.svc) }
