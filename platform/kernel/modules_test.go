package kernel_test

import (
	"context"
	_ "embed"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/scheduler"
)

// The test-only modules below exercise every capability of the module
// contract: widgets owns a table, routes, a seed, a job, a menu and an
// event; audit requires widgets and vetoes or records its event.

// recorder notes the order in which modules are provisioned and stopped.
type recorder struct {
	mu    sync.Mutex
	steps []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.steps...)
}

type widgetCreated struct{ ID, Name string }

func (widgetCreated) Topic() string { return "widget.created" }

type widgetRow struct {
	ID        string
	Name      string
	Kind      string
	CreatedAt time.Time
}

func (widgetRow) TableName() string { return "widgets" }

type widgets struct {
	rec   *recorder
	app   *kernel.App
	ticks atomic.Int64
	slow  atomic.Int64 // slow requests begun
}

var (
	_ kernel.Migrator        = (*widgets)(nil)
	_ kernel.Provisioner     = (*widgets)(nil)
	_ kernel.RouteProvider   = (*widgets)(nil)
	_ kernel.Seeder          = (*widgets)(nil)
	_ kernel.JobProvider     = (*widgets)(nil)
	_ kernel.MenuProvider    = (*widgets)(nil)
	_ kernel.EventDeclarer   = (*widgets)(nil)
	_ kernel.OpenAPIProvider = (*widgets)(nil)
	_ kernel.Stopper         = (*widgets)(nil)
)

func (*widgets) Info() kernel.Info { return kernel.Info{Name: "widgets"} }

func (*widgets) Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "create widgets", Up: migrate.SQL(
		`CREATE TABLE widgets (id VARCHAR(36) PRIMARY KEY, name VARCHAR(100) NOT NULL, kind VARCHAR(20) NOT NULL, created_at TIMESTAMP NOT NULL)`,
		`CREATE UNIQUE INDEX ux_widgets_name ON widgets (name)`,
	)}}
}

func (w *widgets) Provision(_ context.Context, app *kernel.App) error {
	w.app = app
	w.rec.add("provision widgets")
	return nil
}

func (w *widgets) Stop(context.Context) error {
	w.rec.add("stop widgets")
	return nil
}

func (*widgets) Menus() []kernel.Menu {
	return []kernel.Menu{{Key: "Widgets", Title: "Widgets", Order: 1}}
}

func (*widgets) Events() kernel.Events { return kernel.Events{Publishes: []string{"widget.created"}} }

func (w *widgets) Jobs() []scheduler.Job {
	return []scheduler.Job{{Name: "widgets.tick", Interval: 20 * time.Millisecond, Run: func(context.Context) error {
		w.ticks.Add(1)
		return nil
	}}}
}

func (w *widgets) Seed(ctx context.Context, app *kernel.App) error {
	return app.DB.InTx(ctx, func(ctx context.Context) error {
		var n int64
		tx := app.DB.Conn(ctx)
		if err := tx.Model(&widgetRow{}).Where("name = ?", "seeded").Count(&n).Error; err != nil || n > 0 {
			return err
		}
		return tx.Create(&widgetRow{ID: uuid.NewString(), Name: "seeded", Kind: "Small", CreatedAt: app.Clock.Now()}).Error
	})
}

type createWidget struct {
	Name string `json:"name" validate:"required,max=20"`
	Kind string `json:"kind" validate:"required,oneof=Small Large"`
	Size int    `json:"size" validate:"gte=0"`
}

func (w *widgets) Routes(r *httpx.Routes) {
	r.Get("/api/widgets", httpx.Public, func(c *fiber.Ctx) error {
		var n int64
		if err := w.app.DB.Conn(c.UserContext()).Model(&widgetRow{}).Count(&n).Error; err != nil {
			return err
		}
		return c.JSON(fiber.Map{"count": n})
	})
	r.Post("/api/widgets", httpx.Public, func(c *fiber.Ctx) error {
		var in createWidget
		if err := httpx.Bind(c, &in); err != nil {
			return err
		}
		row := widgetRow{ID: uuid.NewString(), Name: in.Name, Kind: in.Kind, CreatedAt: w.app.Clock.Now()}
		err := w.app.DB.InTx(c.UserContext(), func(ctx context.Context) error {
			if err := w.app.DB.Conn(ctx).Create(&row).Error; err != nil {
				if db.IsUniqueViolation(err) {
					return apperr.Conflict("duplicate_code", "A widget with this name exists.")
				}
				return err
			}
			return w.app.Bus.Publish(ctx, widgetCreated{ID: row.ID, Name: row.Name})
		})
		if err != nil {
			return err
		}
		return httpx.Created(c, "/api/widgets/"+row.ID, fiber.Map{"id": row.ID})
	})
	r.Get("/api/widgets/boom", httpx.Public, func(*fiber.Ctx) error {
		panic("secret internal detail: password=hunter2")
	})
	r.Get("/api/widgets/fail", httpx.Public, func(*fiber.Ctx) error {
		return errors.New("dial tcp 10.0.0.7:5432: secret internal detail")
	})
	r.Get("/api/widgets/slow", httpx.Public, func(c *fiber.Ctx) error {
		w.slow.Add(1)
		time.Sleep(300 * time.Millisecond)
		return c.JSON(fiber.Map{"count": 0})
	})
	r.Get("/api/widgets/guarded", httpx.Require("Widgets.Read"), func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"count": 1})
	})
	r.Get("/api/widgets/:id", httpx.Public, func(c *fiber.Ctx) error {
		var row widgetRow
		err := w.app.DB.Conn(c.UserContext()).Where("id = ?", c.Params("id")).Take(&row).Error
		if err != nil {
			if db.IsNotFound(err) {
				return apperr.NotFound("Widget")
			}
			return err
		}
		return c.JSON(fiber.Map{"id": row.ID, "name": row.Name, "kind": row.Kind})
	})
}

func (*widgets) OpenAPI() []byte { return widgetsOpenAPI }

var (
	//go:embed testdata/widgets.yaml
	widgetsOpenAPI []byte
	//go:embed testdata/audit.yaml
	auditOpenAPI []byte
)

// audit requires widgets: it refuses widgets named "forbidden" inside the
// publisher's transaction and counts the others after commit.
type audit struct {
	rec      *recorder
	app      *kernel.App
	recorded atomic.Int64
}

func (*audit) Info() kernel.Info { return kernel.Info{Name: "audit", Requires: []string{"widgets"}} }

func (*audit) Events() kernel.Events { return kernel.Events{Consumes: []string{"widget.created"}} }

func (a *audit) Provision(_ context.Context, app *kernel.App) error {
	a.app = app
	a.rec.add("provision audit")
	app.Bus.Subscribe("widget.created", events.InTx, func(_ context.Context, e events.Event) error {
		if e.(widgetCreated).Name == "forbidden" {
			return apperr.Conflict("in_use", "Audit refuses this widget.")
		}
		return nil
	})
	app.Bus.Subscribe("widget.created", events.AfterCommit, func(context.Context, events.Event) error {
		a.recorded.Add(1)
		return nil
	})
	return nil
}

func (a *audit) Stop(context.Context) error {
	a.rec.add("stop audit")
	return nil
}

func (a *audit) Routes(r *httpx.Routes) {
	r.Get("/api/audit", httpx.Public, func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"count": a.recorded.Load()})
	})
}

func (*audit) OpenAPI() []byte { return auditOpenAPI }

// testGuard lets a request through when it carries X-Test-Policy equal to
// the route's policy, standing in for the identity module.
type guardModule struct{}

type testGuard struct{}

func (testGuard) Handler(a httpx.Access) fiber.Handler {
	return func(c *fiber.Ctx) error {
		switch c.Get("X-Test-Policy") {
		case "":
			return apperr.Unauthorized("token_invalid", "Sign in first.")
		case a.Policy:
			return c.Next()
		}
		return apperr.Forbidden("You lack " + a.Policy + ".")
	}
}

func (guardModule) Info() kernel.Info { return kernel.Info{Name: "guard"} }

func (guardModule) Provision(_ context.Context, app *kernel.App) error {
	kernel.Provide[httpx.Guard](app, testGuard{})
	return nil
}

// cyclic modules require each other.
type named struct {
	name     string
	requires []string
}

func (n named) Info() kernel.Info { return kernel.Info{Name: n.name, Requires: n.requires} }

type testModules struct {
	rec     *recorder
	widgets *widgets
	audit   *audit
}

func newTestModules(withGuard bool) (*testModules, []kernel.Factory) {
	rec := &recorder{}
	tm := &testModules{rec: rec, widgets: &widgets{rec: rec}, audit: &audit{rec: rec}}
	fs := []kernel.Factory{
		func() kernel.Module { return tm.audit },
		func() kernel.Module { return tm.widgets },
	}
	if withGuard {
		fs = append(fs, func() kernel.Module { return guardModule{} })
	}
	return tm, fs
}
