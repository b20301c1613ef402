package reports

import (
	reportsweb "github.com/contractflow/contractflow/modules/reports/internal/web"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/web"
)

var _ kernel.PageProvider = (*Module)(nil)

// Pages declares the dashboard and the export pages (docs/web.md).
func (m *Module) Pages(p *web.Pages) { reportsweb.Register(p, m.svc) }
