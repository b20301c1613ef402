package kernel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// The test-only modules below each claim one thing (a configuration section,
// menu keys, routes, a service) so two of them can claim the same.

// sectionModule owns a configuration section.
type sectionModule struct{ name, key string }

var _ kernel.Configurer = sectionModule{}

func (m sectionModule) Info() kernel.Info { return kernel.Info{Name: m.name} }

func (m sectionModule) ConfigSection() (string, any) {
	return m.key, &struct {
		Size int `mapstructure:"size"`
	}{Size: 1}
}

// menuModule declares menu keys.
type menuModule struct {
	name string
	keys []string
}

var _ kernel.MenuProvider = menuModule{}

func (m menuModule) Info() kernel.Info { return kernel.Info{Name: m.name} }

func (m menuModule) Menus() []kernel.Menu {
	var out []kernel.Menu
	for _, k := range m.keys {
		out = append(out, kernel.Menu{Key: k, Title: k})
	}
	return out
}

// routeModule serves public GET routes.
type routeModule struct {
	name  string
	paths []string
}

var _ kernel.RouteProvider = routeModule{}

func (m routeModule) Info() kernel.Info { return kernel.Info{Name: m.name} }

func (m routeModule) Routes(r *httpx.Routes) {
	for _, p := range m.paths {
		r.Get(p, httpx.Public, func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"count": 0}) })
	}
}

// gadgetService is a service one module provides to others.
type gadgetService interface{ Gadget() string }

type gadget struct{}

func (gadget) Gadget() string { return "gadget" }

// provider provides gadgetService.
type provider struct{ name string }

var _ kernel.Provisioner = provider{}

func (p provider) Info() kernel.Info { return kernel.Info{Name: p.name} }

func (provider) Provision(_ context.Context, app *kernel.App) error {
	kernel.Provide[gadgetService](app, gadget{})
	return nil
}

// consumer takes gadgetService with Need, or with Lookup ignoring whether it
// got one, declaring whatever info says.
type consumer struct {
	info   kernel.Info
	lookup bool
}

var _ kernel.Provisioner = consumer{}

func (c consumer) Info() kernel.Info { return c.info }

func (c consumer) Provision(_ context.Context, app *kernel.App) error {
	if c.lookup {
		_, _ = kernel.Lookup[gadgetService](app)
		return nil
	}
	_, err := kernel.Need[gadgetService](app)
	return err
}

func factories(mods ...kernel.Module) []kernel.Factory {
	out := make([]kernel.Factory, len(mods))
	for i, m := range mods {
		out[i] = func() kernel.Module { return m }
	}
	return out
}

// Two modules claiming one thing fail the start with an error naming both;
// a dependency taken through the registry must be declared.
func TestDriftFailsTheStart(t *testing.T) {
	cases := []struct {
		name    string
		modules []kernel.Factory
		want    []string // nil: the start succeeds
	}{
		{
			name:    "two modules claim one configuration section",
			modules: factories(sectionModule{"alpha", "gadgets"}, sectionModule{"beta", "Gadgets"}),
			want:    []string{"alpha", "beta", "configuration section", "Gadgets"},
		},
		{
			name:    "two modules declare one menu key",
			modules: factories(menuModule{"alpha", []string{"Gadgets", "Alphas"}}, menuModule{"beta", []string{"Betas", "Gadgets"}}),
			want:    []string{"alpha", "beta", "menu key", `"Gadgets"`},
		},
		{
			name:    "a module declares one menu key twice",
			modules: factories(menuModule{"alpha", []string{"Gadgets", "Gadgets"}}),
			want:    []string{"alpha", "menu key", `"Gadgets"`},
		},
		{
			name:    "two modules declare one route",
			modules: factories(routeModule{"alpha", []string{"/api/gadgets", "/api/gadgets/:id"}}, routeModule{"beta", []string{"/api/gadgets/:key/"}}),
			want:    []string{"alpha", "beta", "route", "GET /api/gadgets/:key/"},
		},
		{
			name:    "routes that differ are fine",
			modules: factories(routeModule{"alpha", []string{"/api/gadgets", "/api/gadgets/:id"}}, routeModule{"beta", []string{"/api/gadgets/:id/parts"}}),
		},
		{
			name:    "Need from a module not declared",
			modules: factories(provider{"omega"}, consumer{info: kernel.Info{Name: "zeta"}}),
			want:    []string{"module zeta", "module omega", "gadgetService", "Info.Requires"},
		},
		{
			name:    "Lookup from a module not declared, result ignored",
			modules: factories(provider{"omega"}, consumer{info: kernel.Info{Name: "zeta"}, lookup: true}),
			want:    []string{"module zeta", "module omega", "gadgetService", "Info.Requires"},
		},
		{
			name:    "Need from a required module",
			modules: factories(provider{"omega"}, consumer{info: kernel.Info{Name: "alpha", Requires: []string{"omega"}}}),
		},
		{
			name:    "Lookup from a used module",
			modules: factories(provider{"omega"}, consumer{info: kernel.Info{Name: "alpha", Uses: []string{"omega"}}, lookup: true}),
		},
		{
			name:    "two modules provide one service",
			modules: factories(provider{"alpha"}, provider{"omega"}),
			want:    []string{"module omega", "module alpha", "gadgetService", "already provides"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := kernel.New(kernel.Options{Modules: tc.modules, Set: testkit.Isolated(t, "sqlite"), Environ: []string{}})
			if err == nil {
				defer k.Close(context.Background())
				err = k.Start(context.Background())
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("kernel started; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// The kernel's own view of App (what tests and the CLI hold) takes any
// service: it is no module and declares nothing.
func TestKernelViewTakesAnyService(t *testing.T) {
	k, err := kernel.New(kernel.Options{Modules: factories(provider{"omega"}), Set: testkit.Isolated(t, "sqlite"), Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g, err := kernel.Need[gadgetService](k.App()); err != nil || g.Gadget() != "gadget" {
		t.Errorf("Need from the kernel's view: %v, %v", g, err)
	}
}
