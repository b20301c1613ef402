package web

import (
	"embed"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
)

//go:embed assets
var assets embed.FS

// Options are what the kernel hands the web server.
type Options struct {
	Sessions       Sessions // required
	Bell           Bell     // optional
	DB             *db.DB   // the per-user language
	Log            *slog.Logger
	Production     bool           // Secure cookies
	Location       *time.Location // business.timeZone
	DefaultLang    string         // business.language
	AllowedOrigins []string       // origins besides this site's own that may post forms
}

// Server is the pages of the enabled modules.
type Server struct {
	opts     Options
	messages catalog
	pages    []modulePage
	menus    []MenuEntry
	prefs    *prefs
}

type modulePage struct {
	module string
	page   Page
}

// New returns a server with the platform's own pages (sign-in, sign-out,
// language, the bell's ticket) and messages.
func New(o Options) *Server {
	if o.DefaultLang == "" {
		o.DefaultLang = Languages[0]
	}
	s := &Server{opts: o, messages: catalog{}, prefs: &prefs{db: o.DB}}
	for lang, m := range platformMessages {
		_ = s.messages.add(lang, m) // the first messages: nothing to clash with
	}
	var own Pages
	own.Get("/login", httpx.Public, s.loginForm)
	own.Post("/login", httpx.Public, s.login).RateLimit = "auth-login"
	own.Post("/logout", httpx.Public, s.logout)
	own.Post("/language", httpx.Public, s.setLanguage)
	if o.Bell != nil {
		own.Post("/notifications/ws-ticket", httpx.Authenticated, s.ticket)
	}
	_ = s.Add("platform", &own)
	return s
}

// Add takes one module's pages. A page address that another module already
// serves, or one that belongs to the API, is an error naming both.
func (s *Server) Add(module string, p *Pages) error {
	for _, pg := range p.list {
		if !IsPagePath(pg.Path) || pg.Path == "/static" || strings.HasPrefix(pg.Path, "/static/") {
			return fmt.Errorf("module %s: %s must not live under /api, /swagger, /health or /static", module, pg.Describe())
		}
		for _, prev := range s.pages {
			if prev.page.Method == pg.Method && samePath(prev.page.Path, pg.Path) {
				return fmt.Errorf("modules %s and %s both declare the %s", prev.module, module, pg.Describe())
			}
		}
		s.pages = append(s.pages, modulePage{module, pg})
	}
	s.menus = append(s.menus, p.menus...)
	for lang, m := range p.messages {
		if err := s.messages.add(lang, m); err != nil {
			return fmt.Errorf("module %s: %w", module, err)
		}
	}
	return nil
}

func samePath(a, b string) bool {
	norm := func(p string) string {
		segs := strings.Split(strings.TrimSuffix(strings.ToLower(p), "/"), "/")
		for i, s := range segs {
			if strings.HasPrefix(s, ":") {
				segs[i] = ":"
			}
		}
		return strings.Join(segs, "/")
	}
	return norm(a) == norm(b)
}

// Pages lists every page with the module that serves it.
func (s *Server) Pages() []Page {
	out := make([]Page, len(s.pages))
	for i, p := range s.pages {
		out[i] = p.page
	}
	return out
}

// Handlers returns the chain that runs before a page's own handler: the
// session, the language, CSRF on POST, then the access rule (a signed-out
// browser → 303 to the sign-in page; a missing permission → 403 page).
func (s *Server) Handlers(p Page) []fiber.Handler {
	policy := p.Access.Policy
	return []fiber.Handler{func(c *fiber.Ctx) error {
		c.Locals(localServer, s)
		if c.Method() == fiber.MethodPost {
			if err := s.checkCSRF(c); err != nil {
				return err
			}
		}
		if err := s.resume(c); err != nil {
			return err
		}
		c.Locals(localLang, s.language(c))
		if p.Access.Public {
			return c.Next()
		}
		user, ok := User(c)
		if !ok {
			return s.toSignIn(c)
		}
		if policy != "" && !s.opts.Sessions.Allowed(user.Roles, policy) {
			return apperr.Forbidden(fmt.Sprintf("You need the %s permission.", policy))
		}
		return c.Next()
	}}
}

// MountAssets serves the embedded stylesheet and script under /static.
func (s *Server) MountAssets(f *fiber.App) {
	f.Use("/static", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
		return c.Next()
	}, filesystem.New(filesystem.Config{Root: httpFS(assets), PathPrefix: "assets"}))
}

// MountHome serves a plain home page at / when no module serves one.
func (s *Server) MountHome(f *fiber.App) {
	if slices.ContainsFunc(s.pages, func(p modulePage) bool { return p.page.Path == "/" && p.page.Method == fiber.MethodGet }) {
		return
	}
	home := Page{Method: fiber.MethodGet, Path: "/", Access: httpx.Authenticated, Handler: func(c *fiber.Ctx) error {
		return Render(c, platformPages, "home", "home.title", nil)
	}}
	f.Get("/", append(s.Handlers(home), home.Handler)...)
}

// ErrorHandler shows errors on page addresses as a page and leaves the
// others to api (the problem documents of the API).
func (s *Server) ErrorHandler(api fiber.ErrorHandler) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		if !IsPagePath(c.Path()) {
			return api(c, err)
		}
		c.Locals(localServer, s)
		if rerr := s.errorPage(c, err); rerr != nil {
			return api(c, err)
		}
		return nil
	}
}

const localServer = "web.server"

func serverOf(c *fiber.Ctx) *Server {
	s, ok := c.Locals(localServer).(*Server)
	if !ok {
		panic("web: a page helper was called outside a page request")
	}
	return s
}

// menu builds the navigation of p: the module entries whose menu key p can
// read, following the menu tree of /api/menus/me, after the entries every
// signed-in user sees.
func (s *Server) menu(c *fiber.Ctx, p authn.Principal) []MenuLink {
	var out []MenuLink
	free := slices.Clone(s.menus)
	slices.SortStableFunc(free, func(a, b MenuEntry) int { return a.Order - b.Order })
	for _, e := range free {
		if e.Key == "" {
			out = append(out, s.link(c, e))
		}
	}
	tree, err := s.opts.Sessions.ReadableMenus(c.UserContext(), p.Roles)
	if err != nil {
		s.opts.Log.Warn("web menu", "err", err)
		return out
	}
	var walk func(nodes []MenuNode) []MenuLink
	walk = func(nodes []MenuNode) []MenuLink {
		var links []MenuLink
		for _, n := range nodes {
			kids := walk(n.Children)
			i := slices.IndexFunc(s.menus, func(e MenuEntry) bool { return e.Key == n.Key })
			if i < 0 || !n.Read {
				links = append(links, kids...) // no page of its own: its children move up
				continue
			}
			l := s.link(c, s.menus[i])
			l.Children = kids
			links = append(links, l)
		}
		return links
	}
	return append(out, walk(tree)...)
}

func (s *Server) link(c *fiber.Ctx, e MenuEntry) MenuLink {
	path := c.Path()
	current := path == e.Path || (e.Path != "/" && strings.HasPrefix(path, e.Path+"/"))
	return MenuLink{Label: s.messages.text(Lang(c), e.Label), Path: e.Path, Current: current}
}
