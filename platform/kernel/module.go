// Package kernel loads the compiled-in modules and runs them: it resolves the
// enabled ones in dependency order, migrates, provisions, seeds, mounts their
// routes, starts their jobs and stops everything in reverse on shutdown.
//
// A module registers itself from init() and opts into capabilities by
// implementing small interfaces, each checked by type assertion.
package kernel

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"sync"

	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/scheduler"
	"github.com/contractflow/contractflow/platform/web"
)

// Module is the one method every module has.
type Module interface {
	Info() Info
}

// Info names a module and the modules it needs.
type Info struct {
	Name     string   // lower case, e.g. "contracts"
	Requires []string // modules that must be enabled for this one to run
	// Uses are modules this one works with when they are enabled (it
	// provisions after them and looks their services up with Lookup), and
	// without when they are not.
	Uses []string
}

// Configurer owns a top-level configuration section. Section returns the key
// and a pointer to a struct pre-filled with defaults; the kernel decodes the
// merged configuration into it before Provision and refuses unknown keys.
type Configurer interface {
	ConfigSection() (key string, target any)
}

// Migrator lists the module's migrations. They run for every compiled-in
// module, enabled or not, so switching a module off never changes the schema.
type Migrator interface {
	Migrations() []migrate.Migration
}

// Provisioner builds the module's services once the database is open and its
// required modules are provisioned. It may Provide services to later modules
// and subscribe to events.
type Provisioner interface {
	Provision(ctx context.Context, app *App) error
}

// RouteProvider declares the module's HTTP endpoints.
type RouteProvider interface {
	Routes(r *httpx.Routes)
}

// PageProvider declares the module's browser pages, navigation entries and
// messages (DESIGN §12; docs/web.md). Like routes, pages of a disabled
// module are not mounted, so their addresses answer 404.
type PageProvider interface {
	Pages(p *web.Pages)
}

// MenuProvider declares the permission menu keys the module guards its
// routes with and their default grants; the identity module seeds them into
// the permission matrix of the enabled modules. Menus is a declaration: it
// must not depend on Provision, because the kernel reads it from every
// compiled-in module to refuse a key declared twice.
type MenuProvider interface {
	Menus() []Menu
}

// Seeder inserts the module's reference data. It must be idempotent.
type Seeder interface {
	Seed(ctx context.Context, app *App) error
}

// JobProvider declares background jobs for the scheduler.
type JobProvider interface {
	Jobs() []scheduler.Job
}

// EventDeclarer lists the event topics the module publishes and consumes, so
// the kernel can warn about a consumer whose publisher is switched off.
type EventDeclarer interface {
	Events() Events
}

// OpenAPIProvider returns the module's OpenAPI fragment (paths and
// components, YAML); the kernel merges the fragments into one document.
type OpenAPIProvider interface {
	OpenAPI() []byte
}

// CommandProvider adds operator commands to the CLI.
type CommandProvider interface {
	Commands() []Command
}

// Backgrounder has work that must not delay start-up, such as a check that
// costs a password hash. Serve runs Background in a goroutine of its own once
// the service listens; ctx ends at shutdown, and Close waits for it to return.
type Backgrounder interface {
	Background(ctx context.Context)
}

// Stopper releases what Provision started. Modules stop in reverse order.
type Stopper interface {
	Stop(ctx context.Context) error
}

// Menu is one entry of the menu tree and the key of four policies.
type Menu struct {
	Key       string // e.g. "Contracts"; policies are "<Key>.<Read|Create|Update|Delete>"
	Title     string
	Path      string
	ParentKey string
	Order     int
	// Grants are the key's default permissions (DESIGN §2), which the
	// identity module seeds once for the key; an administrator's later
	// edits are kept. Admin is never listed: it passes every policy.
	Grants Grants
}

// Grants map a role to the actions it is granted by default, as the letters
// of DESIGN §2's table: C create, R read, U update, D delete, e.g.
// {"Drafter": "CRUD", "Finance": "R"}. A role not listed is granted nothing.
type Grants map[string]string

// Events lists topics by name.
type Events struct {
	Publishes []string
	Consumes  []string
}

// Command is one CLI command, e.g. Name "user reset-password".
type Command struct {
	Name  string
	Usage string
	Run   func(ctx context.Context, app *App, args []string, out io.Writer) error
}

// Factory makes a fresh, unprovisioned module; each kernel gets its own
// instances, so several kernels can run in one process (tests).
type Factory func() Module

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
	validName  = regexp.MustCompile(`^[a-z][a-z0-9]{1,31}$`)
)

// Register adds a module to the set compiled into the binary. It is called
// from the module's init() and panics on an empty, malformed or duplicate
// name, because that is a programming error caught at start.
func Register(f Factory) {
	name := f().Info().Name
	if !validName.MatchString(name) || name == PlatformModule {
		panic(fmt.Sprintf("kernel: invalid module name %q", name))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("kernel: module %q registered twice", name))
	}
	registry[name] = f
}

// Registered returns the factories of every compiled-in module, by name.
func Registered() []Factory {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Factory, 0, len(names))
	for _, n := range names {
		out = append(out, registry[n])
	}
	return out
}

// PlatformModule is the name the platform's own migrations are recorded under.
const PlatformModule = "platform"
