package contracts

import (
	contractsweb "github.com/contractflow/contractflow/modules/contracts/internal/web"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/web"
)

var _ kernel.PageProvider = (*Module)(nil)

// Pages declares the contract pages: home (my inbox and drafts), the list,
// a new contract and the detail (docs/web.md).
func (m *Module) Pages(p *web.Pages) {
	contractsweb.Register(p, m.svc, m.svc.MasterData, m.maxBytes)
}
