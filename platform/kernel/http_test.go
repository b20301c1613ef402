package kernel_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

// The HTTP conventions, end to end through a real module: problem shapes
// for each status, bad input writing nothing, and headers on every answer.
func TestProblemResponses(t *testing.T) {
	_, mods := newTestModules(true)
	app := testkit.Start(t, "sqlite", testkit.WithModules(mods...), testkit.WithConfig("http.maxBodyBytes", 256))
	post := func(body any, contentType string) testkit.Request {
		return testkit.Request{Method: "POST", Path: "/api/widgets", Body: body, ContentType: contentType}
	}
	noInternals := func(t *testing.T, r *testkit.Response) {
		p := r.Problem(t)
		if strings.Contains(string(r.Body), "secret") || strings.Contains(string(r.Body), "10.0.0.7") {
			t.Errorf("500 leaks internals: %s", r.Body)
		}
		if p.TraceID == "" || p.TraceID != r.Header.Get("X-Request-Id") {
			t.Errorf("traceId %q, X-Request-Id %q: want equal and set", p.TraceID, r.Header.Get("X-Request-Id"))
		}
	}
	app.Run(t, []testkit.Scenario{
		{Name: "validation errors keyed by PascalCase field", Request: post(map[string]any{"kind": "Small", "size": -1}, ""),
			Status: 400, Code: "validation_failed", Fields: []string{"Name", "Size"},
			Check: func(t *testing.T, r *testkit.Response) {
				p := r.Problem(t)
				if p.Type == "" || p.Title != "Bad Request" || p.Status != 400 || p.Instance != "/api/widgets" {
					t.Errorf("problem members incomplete: %+v", p)
				}
			}},
		{Name: "unknown enum value", Request: post(map[string]any{"name": "a", "kind": "Huge"}, ""),
			Status: 400, Code: "validation_failed", Fields: []string{"Kind"}},
		{Name: "wrong JSON type", Request: post(`{"name": 5, "kind": "Small"}`, "application/json"),
			Status: 400, Code: "validation_failed", Fields: []string{"Name"}},
		{Name: "malformed JSON", Request: post(`{"name": "a",`, "application/json"),
			Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
		{Name: "two JSON values", Request: post(`{"name":"a","kind":"Small"} {}`, "application/json"),
			Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
		{Name: "empty body", Request: post("", "application/json"),
			Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
		{Name: "overlong string", Request: post(map[string]any{"name": strings.Repeat("x", 21), "kind": "Small"}, ""),
			Status: 400, Code: "validation_failed", Fields: []string{"Name"}},
		{Name: "body over the limit", Request: post(`{"name":"`+strings.Repeat("x", 300)+`","kind":"Small"}`, "application/json"),
			Status: 413, Code: "payload_too_large"},
		{Name: "not JSON", Request: post("name=a&kind=Small", "application/x-www-form-urlencoded"),
			Status: 415, Code: "unsupported_media_type"},
		{Name: "no content type", Request: testkit.Request{Method: "POST", Path: "/api/widgets", Body: "{}", ContentType: "text/plain"},
			Status: 415, Code: "unsupported_media_type"},
		{Name: "nothing was written by bad input", Request: testkit.Request{Method: "GET", Path: "/api/widgets"}, Status: 200,
			Check: func(t *testing.T, r *testkit.Response) { expectCount(t, r, 1) }},
		{Name: "duplicate", Request: post(map[string]any{"name": "seeded", "kind": "Small"}, ""),
			Status: 409, Code: "duplicate_code"},
		{Name: "unknown resource", Request: testkit.Request{Method: "GET", Path: "/api/widgets/nope"},
			Status: 404, Code: "not_found"},
		{Name: "unknown route", Request: testkit.Request{Method: "GET", Path: "/api/nothing-here"},
			Status: 404, Code: "not_found"},
		{Name: "HEAD answers as GET, without the body", Request: testkit.Request{Method: "HEAD", Path: "/api/widgets"}, Status: 200,
			Check: func(t *testing.T, r *testkit.Response) {
				if len(r.Body) != 0 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
					t.Errorf("HEAD: body %q, Content-Type %q", r.Body, r.Header.Get("Content-Type"))
				}
			}},
		{Name: "panic is a plain 500", Request: testkit.Request{Method: "GET", Path: "/api/widgets/boom"},
			Status: 500, Code: "internal", Check: noInternals},
		{Name: "unexpected error is a plain 500", Request: testkit.Request{Method: "GET", Path: "/api/widgets/fail"},
			Status: 500, Code: "internal", Check: noInternals},
	})
}

func TestHeadersOnEveryResponse(t *testing.T) {
	_, mods := newTestModules(true)
	app := testkit.Start(t, "sqlite", testkit.WithModules(mods...))
	want := map[string]string{
		"X-Content-Type-Options":            "nosniff",
		"X-Frame-Options":                   "DENY",
		"Referrer-Policy":                   "strict-origin-when-cross-origin",
		"Permissions-Policy":                "geolocation=(), microphone=(), camera=(), payment=()",
		"X-Permitted-Cross-Domain-Policies": "none",
		"Content-Security-Policy":           "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
	}
	for _, path := range []string{"/health/live", "/api/widgets", "/api/widgets/nope", "/api/widgets/boom", "/api/nothing"} {
		t.Run(path, func(t *testing.T) {
			r := app.Do(testkit.Request{Method: "GET", Path: path, Header: map[string]string{"X-Request-Id": "trace-me-1"}})
			for k, v := range want {
				if got := r.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for _, k := range []string{"Server", "X-Powered-By", "Strict-Transport-Security"} {
				if got := r.Header.Get(k); got != "" {
					t.Errorf("%s = %q, want none", k, got)
				}
			}
			if got := r.Header.Get("X-Request-Id"); got != "trace-me-1" {
				t.Errorf("X-Request-Id %q, want the caller's", got)
			}
		})
	}
	t.Run("swagger has no CSP", func(t *testing.T) {
		for _, path := range []string{"/swagger/", "/swagger/doc.json"} {
			r := app.Do(testkit.Request{Method: "GET", Path: path})
			if r.Status != 200 {
				t.Fatalf("%s: status %d", path, r.Status)
			}
			if r.Header.Get("Content-Security-Policy") != "" || r.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("%s: CSP %q, X-Frame-Options %q", path, r.Header.Get("Content-Security-Policy"), r.Header.Get("X-Frame-Options"))
			}
		}
	})
}

func TestProductionSendsHSTS(t *testing.T) {
	_, mods := newTestModules(true)
	app := testkit.Start(t, "sqlite", testkit.WithModules(mods...),
		testkit.WithConfig("app.env", "production"),
		testkit.WithConfig("jwt.secret", strings.Repeat("s", 40)))
	r := app.Do(testkit.Request{Method: "GET", Path: "/health/live"})
	if got := r.Header.Get("Strict-Transport-Security"); !strings.Contains(got, "max-age=31536000") {
		t.Errorf("HSTS %q, want one year", got)
	}
}

func TestRateLimits(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		_, mods := newTestModules(true)
		clk := clock.NewManual(time.Date(2026, 11, 22, 8, 0, 10, 0, time.UTC))
		app := testkit.Start(t, driver, testkit.WithModules(mods...), testkit.WithClock(clk),
			testkit.WithConfig("rateLimit.globalPerMinute", 3),
			testkit.WithConfig("http.trustedProxies", []string{"0.0.0.0"}))
		get := testkit.Request{Method: "GET", Path: "/api/widgets"}
		for i := range 3 {
			if r := app.Do(get); r.Status != 200 {
				t.Fatalf("request %d: status %d", i+1, r.Status)
			}
		}
		r := app.Do(get)
		if r.Status != 429 || r.Problem(t).Code != "rate_limited" {
			t.Fatalf("4th request: status %d, body %s; want 429 rate_limited", r.Status, r.Body)
		}
		if got := r.Header.Get("Retry-After"); got != "50" {
			t.Errorf("Retry-After %q, want 50 (seconds to the next minute)", got)
		}
		other := get
		other.Header = map[string]string{"X-Forwarded-For": "198.51.100.9"}
		if r := app.Do(other); r.Status != 200 {
			t.Errorf("another client IP: status %d, want its own budget", r.Status)
		}
		if r := app.Do(testkit.Request{Method: "GET", Path: "/health/live"}); r.Status != 200 {
			t.Errorf("health probe limited: %d", r.Status)
		}
		clk.Advance(time.Minute)
		if r := app.Do(get); r.Status != 200 {
			t.Errorf("after the window: status %d, want 200", r.Status)
		}
	})
}

func TestCORS(t *testing.T) {
	_, mods := newTestModules(true)
	app := testkit.Start(t, "sqlite", testkit.WithModules(mods...),
		testkit.WithConfig("allowedOrigins", []string{"https://app.example.com"}))
	preflight := func(origin string) *testkit.Response {
		return app.Do(testkit.Request{Method: "OPTIONS", Path: "/api/widgets", Header: map[string]string{
			"Origin": origin, "Access-Control-Request-Method": "POST",
		}})
	}
	if got := preflight("https://app.example.com").Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" {
		t.Errorf("allowed origin: Access-Control-Allow-Origin %q", got)
	}
	if got := preflight("https://evil.example.com").Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("other origin: Access-Control-Allow-Origin %q, want none", got)
	}
}
