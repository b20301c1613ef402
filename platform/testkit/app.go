package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/web"
)

// App is one in-process instance of the service under test.
type App struct {
	t       testing.TB
	Kernel  *kernel.Kernel
	Clock   *clock.Manual
	checker *openapi.ResponseChecker
}

type options struct {
	modules []kernel.Factory
	set     map[string]any
	env     []string
	dir     string
	clock   *clock.Manual
}

// Option adjusts the instance Start builds.
type Option func(*options)

// WithModules loads these modules instead of every registered one.
func WithModules(f ...kernel.Factory) Option {
	return func(o *options) { o.modules = f }
}

// WithConfig sets one configuration key (e.g. "rateLimit.globalPerMinute").
func WithConfig(key string, value any) Option {
	return func(o *options) { o.set[key] = value }
}

// WithEnviron replaces the environment the configuration reads.
func WithEnviron(env ...string) Option {
	return func(o *options) { o.env = env }
}

// WithConfigDir reads config.yaml and config.<env>.yaml from dir.
func WithConfigDir(dir string) Option {
	return func(o *options) { o.dir = dir }
}

// WithClock runs the instance on a manual clock.
func WithClock(c *clock.Manual) Option {
	return func(o *options) { o.clock = c }
}

// Defaults every test instance starts from: generous rate limits (tests
// exercise the limiter explicitly), files in the test's temp folder.
func defaults(t testing.TB, driver string) map[string]any {
	set := Isolated(t, driver)
	set["rateLimit.globalPerMinute"] = 1_000_000
	set["rateLimit.loginPerMinute"] = 1_000_000
	set["seed.demo"] = false
	return set
}

// Isolated returns settings that give an instance its own empty database
// and file storage, and no log file, removed when the test ends.
func Isolated(t testing.TB, driver string) map[string]any {
	t.Helper()
	set := FreshDatabase(t, driver)
	set["storage.path"] = t.TempDir()
	set["log.dir"] = ""
	return set
}

// Start builds, migrates, provisions and seeds a fresh instance on driver
// and closes it when the test ends.
func Start(t testing.TB, driver string, opts ...Option) *App {
	t.Helper()
	o := options{set: defaults(t, driver), env: []string{}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.clock == nil {
		o.clock = clock.NewManual(time.Now())
	}
	var logOut io.Writer = io.Discard
	if os.Getenv("CONTRACTFLOW_TEST_LOG") != "" {
		logOut = os.Stderr
	}
	k, err := kernel.New(kernel.Options{
		ConfigDir: o.dir, Environ: o.env, Set: o.set, Modules: o.modules, Clock: o.clock, LogOutput: logOut, Version: "test",
	})
	if err != nil {
		t.Fatalf("testkit: new kernel: %v", err)
	}
	t.Cleanup(func() {
		if err := k.Close(context.Background()); err != nil {
			t.Errorf("testkit: close kernel: %v", err)
		}
	})
	if err := k.Start(context.Background()); err != nil {
		t.Fatalf("testkit: start kernel: %v", err)
	}
	doc, err := k.OpenAPI()
	if err != nil {
		t.Fatalf("testkit: openapi: %v", err)
	}
	checker, err := responseChecker(doc)
	if err != nil {
		t.Fatalf("testkit: openapi checker: %v", err)
	}
	return &App{t: t, Kernel: k, Clock: o.clock, checker: checker}
}

// checkers shares one checker per document across the tests of a binary.
var checkers sync.Map // document → *openapi.ResponseChecker

func responseChecker(doc []byte) (*openapi.ResponseChecker, error) {
	if c, ok := checkers.Load(string(doc)); ok {
		return c.(*openapi.ResponseChecker), nil
	}
	c, err := openapi.NewResponseChecker(doc)
	if err != nil {
		return nil, err
	}
	checkers.Store(string(doc), c)
	return c, nil
}

// Request is one HTTP call. Body is sent as JSON unless it is a string or
// []byte (sent as is, with ContentType or application/json).
type Request struct {
	Method      string
	Path        string
	Body        any
	Token       string
	ContentType string
	Header      map[string]string
}

// Response is what the service answered.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req through the in-process server. Every response is checked
// against the OpenAPI document: a documented route must answer with a
// documented status and a body matching its schema.
func (a *App) Do(req Request) *Response {
	a.t.Helper()
	r := a.newRequest(req)
	resp, err := a.Kernel.HTTP().Test(r, -1)
	if err != nil {
		a.t.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("%s %s: read body: %v", req.Method, req.Path, err)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	if !documented(req) {
		return out
	}
	err = a.checker.Check(a.newRequest(req), out.Status, out.Header, out.Body)
	if errors.Is(err, openapi.ErrUndocumentedRoute) && (out.Status == http.StatusNotFound || out.Status == http.StatusMethodNotAllowed) {
		err = nil // no route at all: nothing to document
	}
	if err != nil {
		a.t.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.Path, out.Status, err, truncate(body))
	}
	return out
}

// documented reports whether req belongs to the API the OpenAPI document
// describes: not the Swagger UI itself, nor the browser pages, nor CORS
// preflights.
func documented(req Request) bool {
	path, _, _ := strings.Cut(req.Path, "?")
	return req.Method != http.MethodOptions && !web.IsPagePath(path) && !strings.HasPrefix(path, "/swagger")
}

func (a *App) newRequest(req Request) *http.Request {
	a.t.Helper()
	var body io.Reader
	contentType := req.ContentType
	switch b := req.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			a.t.Fatalf("marshal request body: %v", err)
		}
		body = bytes.NewReader(data)
		if contentType == "" {
			contentType = "application/json"
		}
	}
	if contentType == "" && body != nil {
		contentType = "application/json"
	}
	r := httptest.NewRequest(req.Method, req.Path, body)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	if req.Token != "" {
		r.Header.Set("Authorization", "Bearer "+req.Token)
	}
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	return r
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response is not JSON (%v): %s", err, truncate(r.Body))
	}
}

// Problem is an RFC 9457 problem body as the service writes it.
type Problem struct {
	Type     string              `json:"type"`
	Title    string              `json:"title"`
	Status   int                 `json:"status"`
	Detail   string              `json:"detail"`
	Instance string              `json:"instance"`
	TraceID  string              `json:"traceId"`
	Code     string              `json:"code"`
	Errors   map[string][]string `json:"errors"`
}

// Problem decodes a problem body, failing unless the media type is
// application/problem+json.
func (r *Response) Problem(t testing.TB) Problem {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("content type %q, want application/problem+json; body: %s", ct, truncate(r.Body))
	}
	var p Problem
	r.JSON(t, &p)
	return p
}

// WantProblem fails the test unless r is a problem of status (and of code,
// when given) naming every one of fields in its errors, and returns it.
func WantProblem(t testing.TB, r *Response, status int, code string, fields ...string) Problem {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, truncate(r.Body))
	}
	p := r.Problem(t)
	if code != "" && p.Code != code {
		t.Fatalf("code %q, want %q: %s", p.Code, code, truncate(r.Body))
	}
	for _, f := range fields {
		if _, ok := p.Errors[f]; !ok {
			t.Fatalf("errors lack %s: %v", f, slices.Collect(maps.Keys(p.Errors)))
		}
	}
	return p
}

// Scenario is one row of a table-driven HTTP test.
type Scenario struct {
	Name    string
	Request Request
	Status  int
	Code    string   // expected problem code, when the answer is an error
	Fields  []string // expected keys of the problem's errors
	Check   func(t *testing.T, r *Response)
}

// Run runs each scenario as a subtest.
func (a *App) Run(t *testing.T, scenarios []Scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			r := a.Do(sc.Request)
			if r.Status != sc.Status {
				t.Fatalf("status %d, want %d; body: %s", r.Status, sc.Status, truncate(r.Body))
			}
			if sc.Code != "" || len(sc.Fields) > 0 {
				p := r.Problem(t)
				if sc.Code != "" && p.Code != sc.Code {
					t.Errorf("problem code %q, want %q; body: %s", p.Code, sc.Code, truncate(r.Body))
				}
				for _, f := range sc.Fields {
					if _, ok := p.Errors[f]; !ok {
						t.Errorf("problem errors lack field %q: %v", f, slices.Collect(maps.Keys(p.Errors)))
					}
				}
			}
			if sc.Check != nil {
				sc.Check(t, r)
			}
		})
	}
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return fmt.Sprintf("%s… (%d bytes)", b[:2000], len(b))
	}
	return string(b)
}
