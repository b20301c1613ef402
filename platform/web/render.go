package web

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/paging"
)

//go:embed templates
var platformTemplates embed.FS

// base is the layout and the shared partials every page template is parsed
// into, parsed when the first page is (an idle service holds no templates).
var base = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("base").Funcs(funcs).ParseFS(platformTemplates, "templates/base/*.html"))
})

// funcs are the request-independent template functions; what depends on the
// request (language, time zone, CSRF token) is a method of View.
var funcs = template.FuncMap{
	"add": func(a, b int) int { return a + b },
	// round writes a number without decimals (hours remaining: "36").
	"round": func(f float64) string { return strconv.FormatFloat(math.Round(f), 'f', 0, 64) },
	"abs":   math.Abs,
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"query": func(pairs ...string) template.URL { // "k1", "v1", … → "?k1=v1&…"; empty values left out
		q := url.Values{}
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i+1] != "" {
				q.Set(pairs[i], pairs[i+1])
			}
		}
		if len(q) == 0 {
			return ""
		}
		return template.URL("?" + q.Encode())
	},
	"contains": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
}

// Templates are one module's page templates, each parsed with the layout.
// A page file defines "content" (and may define "head" for extra <head>
// lines); its name without ".html" is what Render takes.
//
// They are parsed when the first of them is rendered, not at start: parsed
// templates of every module are ~2 MiB of heap that an API-only or idle
// service never uses.
type Templates struct {
	fsys   fs.FS
	files  []string
	parse  func() map[string]*template.Template // once; panics on a template error
	parsed atomic.Bool                          // for tests: parse has run
}

// MustTemplates takes every file of fsys matching glob (e.g.
// "templates/*.html"), to be parsed with the layout on first use; it panics
// when nothing matches, and the first render panics on a template error (a
// programming error caught by the first test of the module's pages).
func MustTemplates(fsys fs.FS, glob string) *Templates {
	files, err := fs.Glob(fsys, glob)
	if err != nil || len(files) == 0 {
		panic(fmt.Sprintf("web: no templates match %q", glob))
	}
	t := &Templates{fsys: fsys, files: files}
	t.parse = sync.OnceValue(t.parseAll)
	return t
}

// parseAll parses every file with the layout.
func (t *Templates) parseAll() map[string]*template.Template {
	t.parsed.Store(true)
	pages := make(map[string]*template.Template, len(t.files))
	for _, f := range t.files {
		page := template.Must(template.Must(base().Clone()).ParseFS(t.fsys, f))
		pages[strings.TrimSuffix(path.Base(f), ".html")] = page
	}
	return pages
}

// platformPages are the platform's own pages (sign-in, error, home).
var platformPages = MustTemplates(platformTemplates, "templates/*.html")

// View is what every template executes with: the request's language, user,
// menu and CSRF token, and the page's own Data.
type View struct {
	Title   string
	Data    any
	Lang    string
	User    *authn.Principal
	Menu    []MenuLink
	CSRF    string
	Path    string // the request's path and query, for "back here" links
	Flash   string
	Problem *Problem
	Bell    bool
	Unread  int64
	Status  int

	s *Server
}

// MenuLink is one link of the navigation.
type MenuLink struct {
	Label    string
	Path     string
	Current  bool
	Children []MenuLink
}

// Problem is a service error in words, for the top of a form and next to
// its fields.
type Problem struct {
	Code    string
	Message string
	Fields  map[string][]string // PascalCase field → translated messages
	Stale   bool                // someone moved or changed the record meanwhile
	TraceID string
}

// T translates a message key, filling %s/%d verbs with args.
func (v *View) T(key string, args ...any) string { return v.s.messages.text(v.Lang, key, args...) }

// Money formats an amount in VND: "1.250.000.000 ₫".
func (v *View) Money(a money.Amount) string { return FormatMoney(a, "VND") }

// MoneyIn formats an amount in a currency.
func (v *View) MoneyIn(a money.Amount, currency string) string { return FormatMoney(a, currency) }

// Date formats a time (or *time.Time, or RFC 3339 string) as dd/MM/yyyy in
// business.timeZone.
func (v *View) Date(t any) string { return FormatDate(timeOf(t), v.s.opts.Location) }

// DateTime formats as dd/MM/yyyy HH:mm in business.timeZone.
func (v *View) DateTime(t any) string { return FormatDateTime(timeOf(t), v.s.opts.Location) }

// DateInput formats for <input type="date"> (yyyy-MM-dd) in business.timeZone.
func (v *View) DateInput(t any) string {
	tm := timeOf(t)
	if tm.IsZero() {
		return ""
	}
	return tm.In(v.s.opts.Location).Format(time.DateOnly)
}

// Phase names a workflow phase in words ("DangSoanThao" → "Đang soạn
// thảo"), from the messages "phase.<code>".
func (v *View) Phase(code string) string {
	if v.s.messages.has(v.Lang, "phase."+code) {
		return v.T("phase." + code)
	}
	return code
}

// Can reports whether the signed-in user passes a policy ("Contracts.Create").
func (v *View) Can(policy string) bool {
	return v.User != nil && v.s.opts.Sessions.Allowed(v.User.Roles, policy)
}

// FieldErrors returns the translated messages of one field of the problem.
func (v *View) FieldErrors(field string) []string {
	if v.Problem == nil {
		return nil
	}
	return v.Problem.Fields[field]
}

// view builds the View of a request.
func (s *Server) view(c *fiber.Ctx, title string, data any) *View {
	v := &View{Title: title, Data: data, Lang: Lang(c), Path: c.OriginalURL(), s: s, Status: fiber.StatusOK}
	if p, ok := User(c); ok {
		v.User = &p
		v.Menu = s.menu(c, p)
		if s.opts.Bell != nil {
			v.Bell = true
			if n, err := s.opts.Bell.UnreadCount(c.UserContext(), p.UserID); err == nil {
				v.Unread = n
			}
		}
	}
	v.CSRF = s.csrfToken(c)
	if f := c.Cookies(cookieFlash); f != "" {
		v.Flash = s.messages.text(v.Lang, f)
		s.setCookie(c, cookieFlash, "", -1)
	}
	return v
}

// render executes a page template with the layout.
func (s *Server) render(c *fiber.Ctx, t *Templates, name string, v *View) error {
	page, ok := t.parse()[name]
	if !ok {
		return fmt.Errorf("web: no page template %q", name)
	}
	var buf bytes.Buffer
	if err := page.ExecuteTemplate(&buf, "layout", v); err != nil {
		return fmt.Errorf("web: render %s: %w", name, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Type("html", "utf-8")
	return c.Status(v.Status).Send(buf.Bytes())
}

// Render shows a page: the template name of t, its title (a message key)
// and the page's data (reachable as .Data in the template).
func Render(c *fiber.Ctx, t *Templates, name, title string, data any) error {
	s := serverOf(c)
	v := s.view(c, s.messages.text(Lang(c), title), data)
	return s.render(c, t, name, v)
}

// RenderProblem shows a page again with a service error in words: at the
// top of the form and next to the fields it names, in the user's language,
// with the error's status (400, 403, 409…). A stale_version or
// invalid_transition conflict is marked Stale, so the page can say that
// someone moved the record meanwhile; data should then hold the current
// state, read again after the error.
func RenderProblem(c *fiber.Ctx, t *Templates, name, title string, data any, err error) error {
	ae, ok := apperr.As(err)
	if !ok || ae.Kind == apperr.KindInternal || ae.Kind == apperr.KindUnauthorized {
		return err // the error page (500) or the sign-in page
	}
	s := serverOf(c)
	v := s.view(c, s.messages.text(Lang(c), title), data)
	v.Problem = s.problem(c, v.Lang, ae)
	v.Status = httpx.Status(ae.Kind)
	return s.render(c, t, name, v)
}

// problem translates an application error.
func (s *Server) problem(c *fiber.Ctx, lang string, ae *apperr.Error) *Problem {
	p := &Problem{Code: ae.Code, TraceID: httpx.RequestID(c), Fields: map[string][]string{},
		Stale: ae.Code == "stale_version" || ae.Code == "invalid_transition"}
	switch {
	case ae.Code == "account_locked":
		until, _ := ae.Extra["lockedUntil"].(string)
		p.Message = s.messages.text(lang, "problem.account_locked", FormatDateTime(timeOf(until), s.opts.Location))
	case s.messages.has(lang, "problem."+ae.Code):
		p.Message = s.messages.text(lang, "problem."+ae.Code)
		if lang == "en" && ae.Detail != "" && ae.Kind != apperr.KindValidation {
			p.Message = ae.Detail // the service's own English words are the more precise
		}
	default:
		p.Message = ae.Detail
	}
	for f, msgs := range ae.Fields {
		for _, m := range msgs {
			p.Fields[f] = append(p.Fields[f], s.messages.fieldMessage(lang, m))
		}
	}
	return p
}

// Redirect answers 303 See Other, the answer to a form that worked.
func Redirect(c *fiber.Ctx, to string) error { return c.Redirect(to, fiber.StatusSeeOther) }

// RedirectWithFlash redirects and shows a message (a message key) once on
// the next page.
func RedirectWithFlash(c *fiber.Ctx, to, flashKey string) error {
	serverOf(c).setCookie(c, cookieFlash, flashKey, 0)
	return Redirect(c, to)
}

// errorPage renders err as a page: the status of its kind, a title and the
// problem in words, never a problem document.
func (s *Server) errorPage(c *fiber.Ctx, err error) error {
	var ae *apperr.Error
	var fe *fiber.Error
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &fe) && (fe.Code == fiber.StatusNotFound || fe.Code == fiber.StatusMethodNotAllowed):
		ae = apperr.New(apperr.KindNotFound, "page_not_found", "")
	case errors.As(err, &fe):
		// The API's mapping: a connection that sent no request before the
		// read timeout gets 408, which net/http's client closes quietly
		// (any other status on an idle connection it logs as unsolicited).
		ae = httpx.FromFiber(fe)
	default:
		ae = apperr.Internal(err)
	}
	status := httpx.Status(ae.Kind)
	if status >= 500 {
		s.opts.Log.ErrorContext(c.UserContext(), "page failed", "requestId", httpx.RequestID(c),
			"method", c.Method(), "path", c.Path(), "err", err)
	}
	if status == fiber.StatusUnauthorized {
		return s.toSignIn(c)
	}
	if c.Locals(localLang) == nil {
		_ = s.resume(c) // an unknown address never ran the page middleware
		c.Locals(localLang, s.language(c))
	}
	v := s.view(c, "", nil)
	v.Status = status
	v.Problem = s.problem(c, v.Lang, ae)
	switch status {
	case fiber.StatusNotFound:
		v.Title = v.T("error.404")
		v.Problem.Message = v.T("error.404.detail")
	case fiber.StatusForbidden:
		v.Title = v.T("error.403")
	case fiber.StatusInternalServerError:
		v.Title = v.T("error.500")
	default:
		v.Title = v.T("error.title")
	}
	return s.render(c, platformPages, "error", v)
}

// toSignIn sends a signed-out browser to the sign-in page, remembering where
// it was going (a GET's address; after a POST, the page the form was on).
func (s *Server) toSignIn(c *fiber.Ctx) error {
	next := c.OriginalURL()
	if c.Method() != fiber.MethodGet {
		next = "/"
		if ref, err := url.Parse(c.Get(fiber.HeaderReferer)); err == nil && ref.Host == string(c.Request().Host()) {
			next = ref.RequestURI()
		}
	}
	return Redirect(c, "/login?next="+url.QueryEscape(next))
}

// safeNext accepts only a local path as a place to return to.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.HasPrefix(next, "/login") {
		return "/"
	}
	return next
}

// Pager is a list's paging, with the addresses of its neighbours.
type Pager struct {
	Page, TotalPages int
	TotalCount       int64
	PrevURL, NextURL string
}

// NewPager builds the pager of a list page from the service's answer; the
// links keep the request's other query parameters.
func NewPager[T any](c *fiber.Ctx, p paging.Page[T]) Pager {
	link := func(page int) string {
		q, _ := url.ParseQuery(string(c.Request().URI().QueryString()))
		q.Set("page", strconv.Itoa(page))
		return c.Path() + "?" + q.Encode()
	}
	pg := Pager{Page: p.Page, TotalPages: max(p.TotalPages, 1), TotalCount: p.TotalCount}
	if p.Page > 1 {
		pg.PrevURL = link(p.Page - 1)
	}
	if p.Page < p.TotalPages {
		pg.NextURL = link(p.Page + 1)
	}
	return pg
}

// T translates a message key in the request's language, for texts a
// handler puts in a problem or a flash.
func T(c *fiber.Ctx, key string, args ...any) string {
	return serverOf(c).messages.text(Lang(c), key, args...)
}

// Allowed reports whether the signed-in user passes a policy
// ("Contracts.Read"), as the API's guard decides it.
func Allowed(c *fiber.Ctx, policy string) bool {
	p, ok := User(c)
	return ok && serverOf(c).opts.Sessions.Allowed(p.Roles, policy)
}
