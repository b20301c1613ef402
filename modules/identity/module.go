package identity

import (
	"context"
	"crypto/rand"
	_ "embed"
	"flag"
	"fmt"
	"io"

	"github.com/contractflow/contractflow/modules/identity/internal/core"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/web"
)

func init() { kernel.Register(func() kernel.Module { return New() }) }

// New returns an unprovisioned identity module with default configuration.
func New() *Module { return &Module{cfg: core.DefaultConfig()} }

// Module is the identity module: users, roles, tokens, lockout and the
// permission matrix. It provides the guard every other module's routes use.
type Module struct {
	cfg *core.Config
	svc *core.Service
}

var (
	_ kernel.Configurer      = (*Module)(nil)
	_ kernel.Migrator        = (*Module)(nil)
	_ kernel.Provisioner     = (*Module)(nil)
	_ kernel.RouteProvider   = (*Module)(nil)
	_ kernel.MenuProvider    = (*Module)(nil)
	_ kernel.Seeder          = (*Module)(nil)
	_ kernel.OpenAPIProvider = (*Module)(nil)
	_ kernel.CommandProvider = (*Module)(nil)
	_ kernel.Backgrounder    = (*Module)(nil)
	_ Directory              = (*core.Service)(nil)
	_ Sessions               = (*core.Service)(nil)
)

// Info names the module; it requires no other.
func (*Module) Info() kernel.Info { return kernel.Info{Name: "identity"} }

// ConfigSection owns the identity.* keys.
func (m *Module) ConfigSection() (string, any) { return "identity", m.cfg }

// Migrations creates the identity tables.
func (*Module) Migrations() []migrate.Migration { return core.Migrations() }

// Provision builds the service, loads the permission matrix and provides
// the guard, the Directory, Sessions and the pages' sign-in sessions.
func (m *Module) Provision(ctx context.Context, app *kernel.App) error {
	svc, err := core.New(app, m.cfg)
	if err != nil {
		return err
	}
	if err := svc.Start(ctx); err != nil {
		return err
	}
	m.svc = svc
	kernel.Provide[httpx.Guard](app, svc.Guard())
	kernel.Provide[Directory](app, svc)
	kernel.Provide[Sessions](app, svc)
	kernel.Provide[web.Sessions](app, svc.PageSessions())
	return nil
}

// Routes declares the auth, users, roles, menus and permissions endpoints.
func (m *Module) Routes(r *httpx.Routes) { m.svc.Routes(r) }

// Menus declares the Users and Permissions menu keys.
func (*Module) Menus() []kernel.Menu { return core.OwnMenus() }

// Seed inserts the roles, menus, default permissions and administrator.
func (m *Module) Seed(ctx context.Context, app *kernel.App) error { return m.svc.Seed(ctx, app) }

// Background warns while the administrator keeps the default password.
func (m *Module) Background(ctx context.Context) { m.svc.WarnDefaultAdminPassword(ctx) }

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the module's endpoints.
func (*Module) OpenAPI() []byte { return openapiFragment }

// Commands adds the operator's password reset.
func (m *Module) Commands() []kernel.Command {
	return []kernel.Command{{
		Name:  "user reset-password",
		Usage: "--email X [--password P]: set a password (printed when generated), unlock the account, revoke its tokens",
		Run: func(ctx context.Context, _ *kernel.App, args []string, out io.Writer) error {
			fs := flag.NewFlagSet("user reset-password", flag.ContinueOnError)
			fs.SetOutput(out)
			email := fs.String("email", "", "the user's email")
			password := fs.String("password", "", "the new password (generated when empty)")
			if err := fs.Parse(args); err != nil {
				return err
			}
			if *email == "" {
				return fmt.Errorf("user reset-password: --email is required")
			}
			pw := *password
			if pw == "" {
				pw = rand.Text()
			}
			if err := m.svc.ResetPasswordByEmail(ctx, *email, pw); err != nil {
				return err
			}
			if *password == "" {
				fmt.Fprintf(out, "new password for %s: %s\n", *email, pw)
			} else {
				fmt.Fprintf(out, "password of %s reset\n", *email)
			}
			fmt.Fprintln(out, "the account is unlocked and its sessions are revoked")
			return nil
		},
	}}
}

var _ kernel.PageProvider = (*Module)(nil)

// Pages declares the administration pages: users and the permission
// matrix (docs/web.md).
func (m *Module) Pages(p *web.Pages) { m.svc.Pages(p) }
