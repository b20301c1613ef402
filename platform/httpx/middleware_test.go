package httpx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/httpx"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newApp returns a bare app with the service's error handler, the given
// middleware and a few routes: /ok answers 200, /boom fails with an unknown
// error (500), /panic panics, /swagger… and /swaggerx answer 200, and
// /bind binds a JSON body.
func newApp(mw ...fiber.Handler) *fiber.App {
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(discard())})
	for _, h := range mw {
		app.Use(h)
	}
	ok := func(c *fiber.Ctx) error { return c.SendString("ok") }
	app.Get("/ok", ok)
	app.Get("/boom", func(c *fiber.Ctx) error { return errors.New("database exploded") })
	app.Get("/swagger", ok)
	app.Get("/swagger/index.html", ok)
	app.Get("/swaggerx", ok)
	app.Get("/health/live", ok)
	app.Post("/bind", func(c *fiber.Ctx) error {
		var body struct {
			Name string `json:"name"`
		}
		if err := httpx.Bind(c, &body); err != nil {
			return err
		}
		return c.SendString(body.Name)
	})
	return app
}

func do(t *testing.T, app *fiber.App, req *http.Request) *http.Response {
	t.Helper()
	resp, err := app.Test(req, -1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func TestRequestID(t *testing.T) {
	app := newApp(httpx.RequestIDMiddleware())
	app.Get("/id", func(c *fiber.Ctx) error { return c.SendString(httpx.RequestID(c)) })

	cases := []struct {
		name     string
		path     string
		incoming string
		want     string // "" = a generated UUIDv7
	}{
		{name: "generated when absent", path: "/id"},
		{name: "echoed when well-formed", path: "/id", incoming: "gw-1234.abc_DEF", want: "gw-1234.abc_DEF"},
		{name: "echoed at the 64-character limit", path: "/id", incoming: strings.Repeat("a", 64), want: strings.Repeat("a", 64)},
		{name: "refused over 64 characters", path: "/id", incoming: strings.Repeat("a", 65)},
		{name: "refused with a space", path: "/id", incoming: "abc def"},
		{name: "refused with a newline-like character", path: "/id", incoming: "abc%0d%0aX: y"},
		{name: "refused with a slash", path: "/id", incoming: "a/b"},
		{name: "on an error response too", path: "/boom", incoming: "trace-500", want: "trace-500"},
		{name: "on an unknown route too", path: "/nope", incoming: "trace-404", want: "trace-404"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.incoming != "" {
				req.Header.Set("X-Request-Id", tc.incoming)
			}
			resp := do(t, app, req)
			got := resp.Header.Get("X-Request-Id")
			if tc.want != "" {
				assert.Equal(t, tc.want, got)
			} else {
				assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, got)
				assert.NotEqual(t, tc.incoming, got)
			}
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if tc.path == "/id" {
				assert.Equal(t, got, string(body), "the handler sees the echoed id")
			} else {
				var problem map[string]any
				require.NoError(t, json.Unmarshal(body, &problem))
				assert.Equal(t, got, problem["traceId"], "the problem's traceId is the request id")
			}
		})
	}

	t.Run("generated ids differ", func(t *testing.T) {
		a := do(t, app, httptest.NewRequest(http.MethodGet, "/id", nil)).Header.Get("X-Request-Id")
		b := do(t, app, httptest.NewRequest(http.MethodGet, "/id", nil)).Header.Get("X-Request-Id")
		assert.NotEqual(t, a, b)
	})
}

var wantSecurityHeaders = map[string]string{
	"X-Content-Type-Options":            "nosniff",
	"X-Frame-Options":                   "DENY",
	"Referrer-Policy":                   "strict-origin-when-cross-origin",
	"Permissions-Policy":                "geolocation=(), microphone=(), camera=(), payment=()",
	"X-Permitted-Cross-Domain-Policies": "none",
}

const wantCSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"

func TestSecurityHeaders(t *testing.T) {
	cases := []struct {
		name       string
		production bool
		path       string
		status     int
		wantCSP    bool
	}{
		{name: "200", path: "/ok", status: 200, wantCSP: true},
		{name: "200 from a handler that names the server", path: "/identify", status: 200, wantCSP: true},
		{name: "404", path: "/nope", status: 404, wantCSP: true},
		{name: "500", path: "/boom", status: 500, wantCSP: true},
		{name: "panic becomes 500", path: "/panic", status: 500, wantCSP: true},
		{name: "no CSP on /swagger", path: "/swagger", status: 200},
		{name: "no CSP under /swagger/", path: "/swagger/index.html", status: 200},
		{name: "no CSP on an unknown page under /swagger/", path: "/swagger/nope", status: 404},
		{name: "CSP on /swaggerx", path: "/swaggerx", status: 200, wantCSP: true},
		{name: "production 200", production: true, path: "/ok", status: 200, wantCSP: true},
		{name: "production 404", production: true, path: "/nope", status: 404, wantCSP: true},
		{name: "production 500", production: true, path: "/boom", status: 500, wantCSP: true},
		{name: "production /swagger/", production: true, path: "/swagger/index.html", status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := newApp(httpx.SecurityHeaders(tc.production), httpx.AccessLog(discard(), nil), recoverer())
			app.Get("/panic", func(c *fiber.Ctx) error { panic("boom") })
			// Something further down trying to identify the server.
			app.Get("/identify", func(c *fiber.Ctx) error {
				c.Set("Server", "fiber")
				c.Set("X-Powered-By", "Go")
				return c.SendString("ok")
			})
			resp := do(t, app, httptest.NewRequest(http.MethodGet, tc.path, nil))
			require.Equal(t, tc.status, resp.StatusCode)
			for k, v := range wantSecurityHeaders {
				assert.Equal(t, v, resp.Header.Get(k), k)
			}
			if tc.wantCSP {
				assert.Equal(t, wantCSP, resp.Header.Get("Content-Security-Policy"))
			} else {
				assert.Empty(t, resp.Header.Values("Content-Security-Policy"))
			}
			if tc.production {
				assert.Equal(t, "max-age=31536000; includeSubDomains", resp.Header.Get("Strict-Transport-Security"))
			} else {
				assert.Empty(t, resp.Header.Values("Strict-Transport-Security"))
			}
			assert.Empty(t, resp.Header.Values("Server"))
			assert.Empty(t, resp.Header.Values("X-Powered-By"))
		})
	}
}

// recoverer turns a panic into an error, as the kernel's recover middleware does.
func recoverer() fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = errors.New("panic")
			}
		}()
		return c.Next()
	}
}

func TestCORS(t *testing.T) {
	const allowed = "https://app.example.com"
	cases := []struct {
		name        string
		origins     []string
		origin      string
		preflight   bool
		wantAllowed bool
	}{
		{name: "preflight from a configured origin", origins: []string{allowed, "https://other.example.com"}, origin: allowed, preflight: true, wantAllowed: true},
		{name: "simple request from a configured origin", origins: []string{allowed}, origin: allowed, wantAllowed: true},
		{name: "preflight from another origin", origins: []string{allowed}, origin: "https://evil.example.com", preflight: true},
		{name: "simple request from another origin", origins: []string{allowed}, origin: "https://evil.example.com"},
		{name: "preflight with no origins configured", origin: allowed, preflight: true},
		{name: "simple request with no origins configured", origin: allowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := newApp(httpx.CORS(tc.origins))
			method := http.MethodGet
			if tc.preflight {
				method = http.MethodOptions
			}
			req := httptest.NewRequest(method, "/ok", nil)
			req.Header.Set("Origin", tc.origin)
			if tc.preflight {
				req.Header.Set("Access-Control-Request-Method", http.MethodPost)
				req.Header.Set("Access-Control-Request-Headers", "Authorization, Content-Type")
			}
			resp := do(t, app, req)
			if !tc.wantAllowed {
				assert.Empty(t, resp.Header.Values("Access-Control-Allow-Origin"))
				if len(tc.origins) == 0 {
					for k := range resp.Header {
						assert.NotContains(t, strings.ToLower(k), "access-control-", "no CORS header at all without origins")
					}
				}
				return
			}
			assert.Equal(t, tc.origin, resp.Header.Get("Access-Control-Allow-Origin"))
			assert.Equal(t, "X-Request-Id,Retry-After,Content-Disposition,Location", resp.Header.Get("Access-Control-Expose-Headers"))
			assert.Empty(t, resp.Header.Values("Access-Control-Allow-Credentials"))
			if tc.preflight {
				assert.Equal(t, http.StatusNoContent, resp.StatusCode)
				assert.Equal(t, "GET,POST,PUT,DELETE,OPTIONS", resp.Header.Get("Access-Control-Allow-Methods"))
				assert.Equal(t, "Authorization,Content-Type,X-Request-Id", resp.Header.Get("Access-Control-Allow-Headers"))
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	cases := []struct {
		name   string
		limit  int // 0 = no BodyLimit middleware
		body   string
		status int
		code   string
	}{
		{name: "within the limit", limit: 32, body: `{"name":"ok"}`, status: 200},
		{name: "over the limit", limit: 8, body: `{"name":"too long"}`, status: 413, code: "payload_too_large"},
		{name: "default limit without the middleware", body: `{"name":"` + strings.Repeat("x", httpx.DefaultMaxBodyBytes) + `"}`, status: 413, code: "payload_too_large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mw []fiber.Handler
			if tc.limit > 0 {
				mw = append(mw, httpx.BodyLimit(tc.limit))
			}
			app := newApp(mw...)
			req := httptest.NewRequest(http.MethodPost, "/bind", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			resp := do(t, app, req)
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.code != "" {
				var problem map[string]any
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&problem))
				assert.Equal(t, tc.code, problem["code"])
			}
		})
	}
}

// logLine is one decoded access-log record.
type logLine map[string]any

func TestAccessLog(t *testing.T) {
	cases := []struct {
		name      string
		path      string
		wantLevel string // "" = not logged at info
		status    int
	}{
		{name: "success at info", path: "/ok?search=secret", wantLevel: "INFO", status: 200},
		{name: "unknown route at info with the final 404", path: "/nope", wantLevel: "INFO", status: 404},
		{name: "server error at error with the final 500", path: "/boom", wantLevel: "ERROR", status: 500},
		{name: "panic at error with the final 500", path: "/panic", wantLevel: "ERROR", status: 500},
		{name: "health probe not at info", path: "/health/live"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
			ip := func(*fiber.Ctx) string { return "203.0.113.9" }
			app := newApp(httpx.RequestIDMiddleware(), httpx.AccessLog(log, ip), recoverer())
			app.Get("/panic", func(c *fiber.Ctx) error { panic("boom") })
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			req.Header.Set("X-Request-Id", "req-1")
			req.Header.Set("User-Agent", "probe/1.0")
			resp := do(t, app, req)

			lines := requestLines(t, &buf)
			if tc.wantLevel == "" {
				assert.Empty(t, lines)
				return
			}
			require.Equal(t, tc.status, resp.StatusCode)
			require.Len(t, lines, 1)
			l := lines[0]
			assert.Equal(t, tc.wantLevel, l["level"])
			assert.Equal(t, "GET", l["method"])
			assert.Equal(t, strings.SplitN(tc.path, "?", 2)[0], l["path"], "no query string")
			assert.EqualValues(t, tc.status, l["status"])
			assert.Equal(t, "203.0.113.9", l["ip"])
			assert.Equal(t, "req-1", l["requestId"])
			assert.Equal(t, "probe/1.0", l["userAgent"])
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.EqualValues(t, len(body), l["bytes"])
			assert.Contains(t, l, "durationMs")
		})
	}

	t.Run("health probe at debug", func(t *testing.T) {
		var buf bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		app := newApp(httpx.AccessLog(log, nil))
		do(t, app, httptest.NewRequest(http.MethodGet, "/health/live", nil))
		lines := requestLines(t, &buf)
		require.Len(t, lines, 1)
		assert.Equal(t, "DEBUG", lines[0]["level"])
		assert.Equal(t, "0.0.0.0", lines[0]["ip"], "nil ip falls back to the peer")
	})
}

func requestLines(t *testing.T, buf *bytes.Buffer) []logLine {
	t.Helper()
	var out []logLine
	for _, raw := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		var l logLine
		require.NoError(t, json.Unmarshal(raw, &l), string(raw))
		if l["msg"] == "request" {
			out = append(out, l)
		}
	}
	return out
}
