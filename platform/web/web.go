// Package web serves the browser pages of DESIGN §12 from the same binary
// as the API: the layout, the sign-in session, CSRF, Vietnamese/English
// messages, money and date formatting and the embedded assets. It knows no
// business area: each module adds its pages, menu entries and messages
// through kernel.PageProvider, so a disabled module's pages are not mounted
// (404). docs/web.md is the guide for writing a module's pages.
package web

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/httpx"
)

// Page is one page address a module serves. Access is the same rule the API
// uses: httpx.Public, httpx.Authenticated or httpx.Require("Contracts.Read").
type Page struct {
	Method    string
	Path      string // e.g. "/contracts/:id"; never under /api, /swagger, /health or /static
	Access    httpx.Access
	RateLimit string // named rate-limit policy (e.g. "auth-login"); empty = global only
	Handler   fiber.Handler
}

// MenuEntry is one link of the navigation. It is shown when the caller can
// read Key in the permission matrix (the tree of /api/menus/me); an entry
// without a Key is shown to every signed-in user.
type MenuEntry struct {
	Key   string // permission menu key, e.g. "Contracts"; "" = any signed-in user
	Path  string // page address, e.g. "/contracts"
	Label string // message key, e.g. "menu.contracts"
	Order int    // position among entries without a Key (those with one follow the menu tree)
}

// Pages collects what one module adds to the web: pages, menu entries and
// messages.
type Pages struct {
	list     []Page
	menus    []MenuEntry
	messages map[string]map[string]string // lang → key → text
}

// Handle adds a page.
func (p *Pages) Handle(method, path string, a httpx.Access, h fiber.Handler) *Page {
	p.list = append(p.list, Page{Method: method, Path: path, Access: a, Handler: h})
	return &p.list[len(p.list)-1]
}

// Get adds a page shown by GET.
func (p *Pages) Get(path string, a httpx.Access, h fiber.Handler) *Page {
	return p.Handle(fiber.MethodGet, path, a, h)
}

// Post adds a form target. Every POST is checked for the CSRF token and a
// same-site Origin before the handler runs.
func (p *Pages) Post(path string, a httpx.Access, h fiber.Handler) *Page {
	return p.Handle(fiber.MethodPost, path, a, h)
}

// Menu adds a navigation entry.
func (p *Pages) Menu(e MenuEntry) { p.menus = append(p.menus, e) }

// Messages adds texts for one language ("vi" or "en"). Keys are shared by
// every module, so prefix them with the module's area ("contracts.title").
func (p *Pages) Messages(lang string, m map[string]string) {
	if p.messages == nil {
		p.messages = map[string]map[string]string{}
	}
	if p.messages[lang] == nil {
		p.messages[lang] = map[string]string{}
	}
	for k, v := range m {
		p.messages[lang][k] = v
	}
}

// List returns the collected pages.
func (p *Pages) List() []Page { return p.list }

// Describe renders a page for logs and errors.
func (p Page) Describe() string { return fmt.Sprintf("page %s %s (%s)", p.Method, p.Path, p.Access) }

// IsPagePath reports whether a request path belongs to the pages rather
// than the API, the API documents or the probes: errors on it are shown as a
// page, not a problem document.
func IsPagePath(path string) bool {
	for _, prefix := range []string{"/api", "/swagger", "/health"} {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return false
		}
	}
	return true
}
