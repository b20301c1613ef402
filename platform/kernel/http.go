package kernel

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/ratelimit"
	"github.com/contractflow/contractflow/platform/web"
)

// RateLimitLogin is the named rate-limit policy of the login endpoint.
const RateLimitLogin = "auth-login"

// routeEntry remembers which module serves a route, for the route table and
// the OpenAPI consistency check.
type routeEntry struct {
	Module string
	Route  httpx.Route
}

// RouteInfo describes one mounted route.
type RouteInfo struct {
	Module, Method, Path, Access string
}

// Routes lists the module routes mounted by Start.
func (k *Kernel) Routes() []RouteInfo {
	out := make([]RouteInfo, len(k.routes))
	for i, r := range k.routes {
		out[i] = RouteInfo{Module: r.Module, Method: r.Route.Method, Path: r.Route.Path, Access: r.Route.Access.String()}
	}
	return out
}

// builtDocs caches merged documents by their inputs: merging and validating
// costs milliseconds, and tests start hundreds of kernels with the same
// modules.
var builtDocs sync.Map // sha256 of version and fragments → []byte

// OpenAPI builds the merged OpenAPI document of the platform and the enabled
// modules.
func (k *Kernel) OpenAPI() ([]byte, error) {
	h := sha256.New()
	h.Write([]byte(k.opts.Version))
	type fragment struct {
		module string
		doc    []byte
	}
	var fragments []fragment
	for _, m := range k.enabled {
		if p, ok := m.(OpenAPIProvider); ok {
			f := fragment{m.Info().Name, p.OpenAPI()}
			fragments = append(fragments, f)
			fmt.Fprintf(h, "\x00%s\x00%d\x00", f.module, len(f.doc))
			h.Write(f.doc)
		}
	}
	key := string(h.Sum(nil))
	if doc, ok := builtDocs.Load(key); ok {
		return doc.([]byte), nil
	}
	b, err := openapi.New(k.opts.Version)
	if err != nil {
		return nil, err
	}
	for _, f := range fragments {
		if err := b.Add(f.module, f.doc); err != nil {
			return nil, err
		}
	}
	doc, err := b.Build()
	if err != nil {
		return nil, err
	}
	builtDocs.Store(key, doc)
	return doc, nil
}

func (k *Kernel) buildHTTP() error {
	cfg := k.app.Config
	log := k.app.Log
	clientIP, err := httpx.NewClientIP(cfg.HTTP.TrustedProxies)
	if err != nil {
		return fmt.Errorf("config key http.trustedProxies: %w", err)
	}
	doc, err := k.OpenAPI()
	if err != nil {
		return fmt.Errorf("openapi: %w", err)
	}

	pages, err := k.webServer()
	if err != nil {
		return err
	}
	errorHandler := httpx.ErrorHandler(log)
	if pages != nil {
		errorHandler = pages.ErrorHandler(errorHandler)
	}
	f := fiber.New(fiber.Config{
		AppName:               "",
		ServerHeader:          "",
		DisableStartupMessage: true,
		ErrorHandler:          errorHandler,
		// Values read from a request (params, query, headers) stay valid
		// after it ends: handlers put them in events and caches.
		Immutable: true,
		// The server-wide cap admits uploads; JSON bodies are held to
		// http.maxBodyBytes by httpx.Bind.
		BodyLimit:    max(cfg.Uploads.MaxBytes, cfg.HTTP.MaxBodyBytes) + 64<<10,
		ReadTimeout:  cfg.HTTP.ReadTimeout,
		WriteTimeout: cfg.HTTP.WriteTimeout,
		IdleTimeout:  2 * time.Minute,
	})
	f.Use(func(c *fiber.Ctx) error {
		k.inFlight.Add(1)
		defer k.inFlight.Add(-1)
		return c.Next()
	})
	f.Use(httpx.RequestIDMiddleware())
	f.Use(httpx.SecurityHeaders(cfg.IsProduction()))
	f.Use(httpx.AccessLog(log, clientIP))
	f.Use(recover.New())
	f.Use(httpx.CORS(cfg.AllowedOrigins))
	f.Use(httpx.BodyLimit(cfg.HTTP.MaxBodyBytes))

	limits := map[string]int{RateLimitLogin: cfg.RateLimit.LoginPerMinute}
	var limiter *ratelimit.Limiter
	if cfg.RateLimit.Enabled {
		// One node on SQLite counts in memory; nodes sharing Postgres also
		// exchange their counts through the database every second, so the
		// limit holds across them without a write per request.
		var store ratelimit.Store = ratelimit.NewMemoryStore()
		if k.app.DB.Dialect() == db.Postgres {
			k.rlStore = ratelimit.NewSharedStore(k.app.DB)
			store = k.rlStore
		}
		limiter = ratelimit.New(store, k.app.Clock, clientIP, log)
		f.Use(limiter.Middleware("global", cfg.RateLimit.GlobalPerMinute, isHealth))
	}

	f.Get("/health/live", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"status": "Healthy"})
	})
	f.Get("/health/ready", func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		if err := k.app.DB.Ping(ctx); err != nil {
			log.Warn("readiness probe failed", "err", err)
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "Unhealthy"})
		}
		return c.JSON(fiber.Map{"status": "Healthy"})
	})
	openapi.Mount(f, doc)

	guard, hasGuard := Lookup[httpx.Guard](k.app)
	k.routes = nil
	declared := map[string]string{} // routeKey → module
	for _, m := range k.enabled {
		rp, ok := m.(RouteProvider)
		if !ok {
			continue
		}
		var rs httpx.Routes
		rp.Routes(&rs)
		for _, r := range rs.List() {
			if !strings.HasPrefix(r.Path, "/api/") {
				return fmt.Errorf("module %s: route %s must live under /api", m.Info().Name, r.Describe())
			}
			// The router would serve the first and never reach the second.
			if prev, dup := declared[routeKey(r)]; dup {
				return fmt.Errorf("modules %s and %s both declare the route %s", prev, m.Info().Name, r.Describe())
			}
			declared[routeKey(r)] = m.Info().Name
			var chain []fiber.Handler
			if r.RateLimit != "" {
				perMinute, ok := limits[r.RateLimit]
				if !ok {
					return fmt.Errorf("module %s: route %s names unknown rate-limit policy %q", m.Info().Name, r.Describe(), r.RateLimit)
				}
				if limiter != nil {
					chain = append(chain, limiter.Middleware(r.RateLimit, perMinute, nil))
				}
			}
			if !r.Access.Public {
				if !hasGuard {
					return fmt.Errorf("module %s: route %s needs a guard, but no enabled module provides authentication (enable identity)", m.Info().Name, r.Describe())
				}
				chain = append(chain, guard.Handler(r.Access))
			}
			// The text rule of query strings (DESIGN §1), after the guard.
			chain = append(chain, httpx.CheckQuery, r.Handler)
			addRoute(f, r.Method, r.Path, chain)
			k.routes = append(k.routes, routeEntry{Module: m.Info().Name, Route: r})
		}
	}
	if pages != nil {
		if err := k.mountPages(f, pages, limiter, limits); err != nil {
			return err
		}
	}
	k.http = f
	return nil
}

// addRoute mounts chain on method and path, and a GET on HEAD too, as
// fiber.App.Get does (RFC 9110 asks every GET resource to answer HEAD;
// fasthttp leaves the body out).
func addRoute(f *fiber.App, method, path string, chain []fiber.Handler) {
	if method == fiber.MethodGet {
		f.Add(fiber.MethodHead, path, chain...)
	}
	f.Add(method, path, chain...)
}

// webServer collects the pages of the enabled modules; nil when no module
// provides web.Sessions (identity disabled), for then no one can sign in.
func (k *Kernel) webServer() (*web.Server, error) {
	sessions, ok := Lookup[web.Sessions](k.app)
	if !ok {
		return nil, nil
	}
	bell, _ := Lookup[web.Bell](k.app)
	cfg := k.app.Config
	s := web.New(web.Options{Sessions: sessions, Bell: bell, DB: k.app.DB, Log: k.app.Log, Production: cfg.IsProduction(),
		Location: cfg.Business.Location, DefaultLang: cfg.Business.Language, AllowedOrigins: cfg.AllowedOrigins})
	for _, m := range k.enabled {
		pp, ok := m.(PageProvider)
		if !ok {
			continue
		}
		var p web.Pages
		pp.Pages(&p)
		if err := s.Add(m.Info().Name, &p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// mountPages mounts the assets and every page behind the page chain (rate
// limit, session, CSRF, access rule, the text rule of query strings).
func (k *Kernel) mountPages(f *fiber.App, s *web.Server, limiter *ratelimit.Limiter, limits map[string]int) error {
	s.MountAssets(f)
	k.pages = nil
	for _, p := range s.Pages() {
		var chain []fiber.Handler
		if p.RateLimit != "" {
			perMinute, ok := limits[p.RateLimit]
			if !ok {
				return fmt.Errorf("%s names unknown rate-limit policy %q", p.Describe(), p.RateLimit)
			}
			if limiter != nil {
				chain = append(chain, limiter.Middleware(p.RateLimit, perMinute, nil))
			}
		}
		chain = append(chain, s.Handlers(p)...)
		chain = append(chain, httpx.CheckQuery, p.Handler)
		addRoute(f, p.Method, p.Path, chain)
		k.pages = append(k.pages, p)
	}
	s.MountHome(f)
	return nil
}

// Pages lists the browser pages mounted by Start.
func (k *Kernel) Pages() []web.Page { return k.pages }

func isHealth(c *fiber.Ctx) bool { return strings.HasPrefix(c.Path(), "/health/") }
