package notifications

import (
	notificationsweb "github.com/contractflow/contractflow/modules/notifications/internal/web"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/web"
)

var _ kernel.PageProvider = (*Module)(nil)

// Pages declares the notifications page, where the layout's bell leads.
func (m *Module) Pages(p *web.Pages) { notificationsweb.Register(p, m.svc) }
