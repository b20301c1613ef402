package workflowdesigner

import (
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/core"
	wfweb "github.com/contractflow/contractflow/modules/workflowdesigner/internal/web"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/web"
)

var _ kernel.PageProvider = (*Module)(nil)

// Pages declares the workflow administration pages (docs/web.md): the same
// Designer and Runtime the API's routes use.
func (m *Module) Pages(p *web.Pages) {
	wfweb.Register(p, core.NewDesigner(m.svc, m.declaredKinds), m.rt, m.declaredKinds)
}
