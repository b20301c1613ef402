package kernel

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"

	"github.com/contractflow/contractflow/platform/cache"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/config"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/storage"
)

// App is what a module receives: the shared infrastructure, and a registry
// through which modules hand each other the narrow interfaces they export.
//
// Each module gets its own view of App, naming the module and sharing the
// infrastructure and the registry with every other view: the registry then
// knows who provides a service and who asks for it, and refuses a module
// that takes a service from a module it did not declare (Info.Requires or
// Info.Uses). The view the kernel keeps for itself (Kernel.App) is not
// checked.
type App struct {
	Config *config.Config
	DB     *db.DB
	Log    *slog.Logger
	Clock  clock.Clock
	Bus    *events.Bus
	Blobs  storage.Blobs // files under storage.path
	// Caches carries the invalidations of modules' in-memory caches
	// (platform/cache) between the nodes sharing the database.
	Caches *cache.Bus

	self *Info // the module this view belongs to; nil for the kernel's view
	reg  *shared
}

// shared is what every view of App shares: the registry of services and
// the menus.
type shared struct {
	menus    []Menu // of the enabled modules; set before any module runs
	mu       sync.RWMutex
	services map[reflect.Type]provided
	drift    []error         // undeclared dependencies and double providers, for the kernel to report
	started  bool            // past start-up: drift is logged (once each) instead of collected
	logged   map[string]bool // drift already logged
}

// report records drift for the kernel to fail the start with; once the
// kernel has started, a lookup made at request time can only be logged.
func (a *App) report(err error) {
	r := a.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		r.drift = append(r.drift, err)
		return
	}
	if !r.logged[err.Error()] {
		r.logged[err.Error()] = true
		a.Log.Error("undeclared module dependency", "err", err)
	}
}

// provided is a service and the module that provided it.
type provided struct {
	impl   any
	module string
}

func newApp(base App) *App {
	base.self = nil
	base.reg = &shared{services: map[reflect.Type]provided{}, logged: map[string]bool{}}
	return &base
}

// forModule returns the view of App handed to the module described by info.
func (a *App) forModule(info Info) *App {
	view := *a
	view.self = &info
	return &view
}

// module names the view's module, or "the kernel".
func (a *App) module() string {
	if a.self == nil {
		return "the kernel"
	}
	return "module " + a.self.Name
}

// Menus returns the menu entries of every enabled module.
func (a *App) Menus() []Menu { return slices.Clone(a.reg.menus) }

// Provide registers impl as the service of interface type T, for modules
// provisioned later (the ones that require the provider). A second module
// providing the same type is a start-up error that names both.
func Provide[T any](a *App, impl T) {
	t := reflect.TypeFor[T]()
	name := ""
	if a.self != nil {
		name = a.self.Name
	}
	r := a.reg
	r.mu.Lock()
	prev, dup := r.services[t]
	if !dup || prev.module == name {
		r.services[t] = provided{impl: impl, module: name}
	}
	r.mu.Unlock()
	if dup && prev.module != name {
		a.report(fmt.Errorf("%s provides %s, which module %s already provides; one type has one provider",
			a.module(), t, prev.module))
	}
}

// Lookup returns the service of type T, or false when no enabled module
// provides one. A module may look up its own services and those of the
// modules it lists in Info.Requires or Info.Uses; a service of any other
// module is refused (false) and fails the start.
func Lookup[T any](a *App) (T, bool) {
	v, err := lookup[T](a)
	return v, err == nil
}

// Need is Lookup for a service the caller cannot run without.
func Need[T any](a *App) (T, error) {
	return lookup[T](a)
}

func lookup[T any](a *App) (T, error) {
	var zero T
	t := reflect.TypeFor[T]()
	r := a.reg
	r.mu.RLock()
	p, ok := r.services[t]
	r.mu.RUnlock()
	if !ok {
		return zero, fmt.Errorf("no enabled module provides %s", t)
	}
	if err := a.mayUse(p.module, t); err != nil {
		a.report(err)
		return zero, err
	}
	return p.impl.(T), nil
}

// mayUse reports an undeclared dependency: the view's module takes t from
// provider without listing it in Info.Requires or Info.Uses.
func (a *App) mayUse(provider string, t reflect.Type) error {
	if a.self == nil || provider == "" || provider == a.self.Name ||
		slices.Contains(a.self.Requires, provider) || slices.Contains(a.self.Uses, provider) {
		return nil
	}
	return fmt.Errorf("module %s takes %s from module %s but does not declare it: add %q to Info.Requires (or to Info.Uses when it can run without it)",
		a.self.Name, t, provider, provider)
}

// markStarted ends start-up: later drift is logged, not collected.
func (a *App) markStarted() {
	a.reg.mu.Lock()
	a.reg.started = true
	a.reg.mu.Unlock()
}

// takeDrift returns and forgets the dependency errors recorded so far.
func (a *App) takeDrift() []error {
	a.reg.mu.Lock()
	defer a.reg.mu.Unlock()
	out := a.reg.drift
	a.reg.drift = nil
	return out
}
