package kernel

import (
	"fmt"
	"log/slog"
	"reflect"
	"sync"

	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/config"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/storage"
)

// App is what a module receives: the shared infrastructure, and a registry
// through which modules hand each other the narrow interfaces they export.
type App struct {
	Config *config.Config
	DB     *db.DB
	Log    *slog.Logger
	Clock  clock.Clock
	Bus    *events.Bus
	Blobs  storage.Blobs // files under storage.path

	menus    []Menu
	mu       sync.RWMutex
	services map[reflect.Type]any
}

// Menus returns the menu entries of every enabled module.
func (a *App) Menus() []Menu { return append([]Menu(nil), a.menus...) }

// Provide registers impl as the service of interface type T, for modules
// provisioned later (the ones that require the provider).
func Provide[T any](a *App, impl T) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.services == nil {
		a.services = map[reflect.Type]any{}
	}
	a.services[reflect.TypeFor[T]()] = impl
}

// Lookup returns the service of type T, or false when no enabled module
// provides one.
func Lookup[T any](a *App) (T, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	v, ok := a.services[reflect.TypeFor[T]()]
	if !ok {
		var zero T
		return zero, false
	}
	return v.(T), true
}

// Need is Lookup for a service the caller cannot run without.
func Need[T any](a *App) (T, error) {
	v, ok := Lookup[T](a)
	if !ok {
		return v, fmt.Errorf("no enabled module provides %s", reflect.TypeFor[T]())
	}
	return v, nil
}
