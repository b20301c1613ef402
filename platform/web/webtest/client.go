// Package webtest drives the browser pages in tests: a real listening
// server for a testkit instance, an HTTP client that keeps cookies and
// fills the CSRF field like a browser's form would, and (browser.go) a
// shared headless Chromium.
package webtest

import (
	"context"
	stdhtml "html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

// Serve listens on a free local port with the instance's handler and
// returns its base address ("http://127.0.0.1:port"); the server stops when
// the test ends.
func Serve(t testing.TB, app *testkit.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("webtest: listen: %v", err)
	}
	h := app.Kernel.HTTP()
	go func() { _ = h.Listener(ln) }()
	t.Cleanup(func() { _ = h.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}

// Client is one browser's worth of cookies. It does not follow redirects,
// so tests see the 303s.
type Client struct {
	t    testing.TB
	Base string
	http *http.Client
}

// NewClient returns a client of the server at base.
func NewClient(t testing.TB, base string) *Client {
	jar, _ := cookiejar.New(nil)
	return &Client{t: t, Base: base, http: &http.Client{
		Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Response is a page's answer.
type Response struct {
	Status   int
	Header   http.Header
	Body     string
	Location string // of a redirect
}

// Get requests a page.
func (c *Client) Get(path string) *Response {
	c.t.Helper()
	return c.Do(http.MethodGet, path, nil, nil)
}

// Post sends a form as a browser would, with the CSRF token of the
// client's cookie unless form already carries a csrf_token (set it to ""
// to send none).
func (c *Client) Post(path string, form url.Values) *Response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, set := form["csrf_token"]; !set {
		form.Set("csrf_token", c.CSRF())
	} else if form.Get("csrf_token") == "" {
		form.Del("csrf_token")
	}
	return c.Do(http.MethodPost, path, strings.NewReader(form.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": c.Base})
}

// Do sends any request; header values replace the defaults.
func (c *Client) Do(method, path string, body io.Reader, header map[string]string) *Response {
	c.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, c.Base+path, body)
	if err != nil {
		c.t.Fatalf("webtest: %s %s: %v", method, path, err)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("webtest: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("webtest: %s %s: read: %v", method, path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: string(b), Location: resp.Header.Get("Location")}
}

// CSRF returns the client's CSRF token, fetching the sign-in page first
// when it has none yet.
func (c *Client) CSRF() string {
	c.t.Helper()
	if v := c.cookie("cf_csrf"); v != "" {
		return v
	}
	c.Get("/login")
	return c.cookie("cf_csrf")
}

func (c *Client) cookie(name string) string {
	u, _ := url.Parse(c.Base)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// SignIn signs in through the sign-in form and fails the test unless it
// worked.
func (c *Client) SignIn(email, password string) {
	c.t.Helper()
	r := c.Post("/login", url.Values{"email": {email}, "password": {password}})
	if r.Status != http.StatusSeeOther || c.cookie("cf_session") == "" {
		c.t.Fatalf("webtest: sign in as %s: %d %s", email, r.Status, Text(r.Body))
	}
}

var (
	tags   = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]+>`)
	spaces = regexp.MustCompile(`\s+`)
)

// Text is a page's visible text, tags removed and spaces collapsed: what
// assertions on words compare against.
func Text(s string) string {
	return strings.TrimSpace(spaces.ReplaceAllString(stdhtml.UnescapeString(tags.ReplaceAllString(s, " ")), " "))
}

// WantPage fails t unless r has status and its visible text holds every word.
func WantPage(t testing.TB, r *Response, status int, words ...string) {
	t.Helper()
	text := Text(r.Body)
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, text)
	}
	for _, w := range words {
		if !strings.Contains(text, w) {
			t.Fatalf("page lacks %q: %s", w, text)
		}
	}
}

// WantRedirect fails t unless r is a 303 to a path starting with to.
func WantRedirect(t testing.TB, r *Response, to string) {
	t.Helper()
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, to) {
		t.Fatalf("want 303 to %s, got %d → %q: %s", to, r.Status, r.Location, Text(r.Body))
	}
}
