package notifications

import (
	"context"
	_ "embed"
	"time"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/notifications/internal/core"
	notificationsweb "github.com/contractflow/contractflow/modules/notifications/internal/web"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/notify"
	"github.com/contractflow/contractflow/platform/scheduler"
	"github.com/contractflow/contractflow/platform/web"
)

func init() { kernel.Register(func() kernel.Module { return New() }) }

// New returns an unprovisioned notifications module with default configuration.
func New() *Module { return &Module{cfg: core.DefaultConfig()} }

// Module is the notifications module.
type Module struct {
	cfg *core.Config
	svc *core.Service
	hub *notify.Hub
}

var (
	_ kernel.Configurer      = (*Module)(nil)
	_ kernel.Migrator        = (*Module)(nil)
	_ kernel.Provisioner     = (*Module)(nil)
	_ kernel.RouteProvider   = (*Module)(nil)
	_ kernel.JobProvider     = (*Module)(nil)
	_ kernel.OpenAPIProvider = (*Module)(nil)
	_ kernel.Stopper         = (*Module)(nil)
	_ notify.Receiver        = (*core.Service)(nil)
)

// Info names the module; users and their roles come from identity.
func (*Module) Info() kernel.Info {
	return kernel.Info{Name: "notifications", Requires: []string{"identity"}}
}

// ConfigSection owns the notifications.* keys.
func (m *Module) ConfigSection() (string, any) { return "notifications", m.cfg }

// Migrations creates the notification tables.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision builds the service, subscribes it to every event inside the
// publisher's transaction, starts the hub and the sign-in watch, and
// provides the pages' bell.
func (m *Module) Provision(ctx context.Context, app *kernel.App) error {
	if err := m.cfg.Validate(); err != nil {
		return err
	}
	dir, err := kernel.Need[identity.Directory](app)
	if err != nil {
		return err
	}
	sessions, err := kernel.Need[identity.Sessions](app)
	if err != nil {
		return err
	}
	m.hub = notify.New(notify.Config{DB: app.DB, DSN: app.Config.Database.DSN, Log: app.Log})
	m.svc = core.New(core.Deps{DB: app.DB, Clock: app.Clock, Log: app.Log, Hub: m.hub, Directory: dir, Sessions: sessions,
		Config: *m.cfg, AllowedOrigins: app.Config.AllowedOrigins})
	if err := m.hub.Start(ctx, m.svc); err != nil {
		return err
	}
	m.svc.Start()
	kernel.Provide[web.Bell](app, notificationsweb.Bell{Svc: m.svc})
	app.Bus.SubscribeAll(events.InTx, m.svc.Store)
	return nil
}

// Routes declares the notification endpoints and the WebSocket.
func (m *Module) Routes(r *httpx.Routes) { m.svc.Routes(r) }

// Jobs deletes notifications older than notifications.retentionDays.
func (m *Module) Jobs() []scheduler.Job {
	return []scheduler.Job{{Name: "notifications.retention", Interval: time.Hour, FirstDelay: time.Minute, Run: m.svc.Purge}}
}

// Stop closes every socket (1001, going away) and the hub's listener.
func (m *Module) Stop(ctx context.Context) error {
	if m.svc == nil {
		return nil
	}
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m.svc.Stop(stopCtx)
	m.hub.Stop()
	return nil
}

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the notification endpoints and the socket.
func (*Module) OpenAPI() []byte { return openapiFragment }
