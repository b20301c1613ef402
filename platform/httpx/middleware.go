package httpx

import (
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
	"github.com/google/uuid"
)

// The middleware in this file is meant to run in this order, outermost
// first: RequestIDMiddleware, SecurityHeaders, AccessLog, panic recovery,
// CORS, BodyLimit, rate limits, then the routes. Request id and security
// headers are set before anything can fail, so error responses carry them
// too; the access log sits outside recovery so it sees a panic as the 500 it
// became.

// HeaderRequestID carries the request id in both directions.
const HeaderRequestID = "X-Request-Id"

// maxRequestIDLen bounds an incoming request id, so a client cannot make every
// log line and problem of its requests arbitrarily long.
const maxRequestIDLen = 64

// RequestIDMiddleware gives every request an id: the caller's X-Request-Id
// when it is 1..64 characters of [A-Za-z0-9._-] (so a gateway's id threads
// through our logs), otherwise a fresh UUIDv7. The id is echoed in the
// response before the rest of the chain runs, so error responses carry it as
// well, and it becomes the problem's traceId.
func RequestIDMiddleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Get(HeaderRequestID)
		if validRequestID(id) {
			// c.Get aliases the request buffer, which fasthttp reuses.
			id = strings.Clone(id)
		} else {
			id = newRequestID()
		}
		SetRequestID(c, id)
		c.Set(HeaderRequestID, id)
		return c.Next()
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch ch := id[i]; {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9',
			ch == '.', ch == '_', ch == '-':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// Only a failing random source gets here; a v4 id still identifies the request.
		return uuid.NewString()
	}
	return id.String()
}

// AccessLog writes one structured line per finished request: method, path
// (without the query string, which may hold search terms or tokens), final
// status, duration, bytes sent, client address, request id and user agent.
// Server errors log at error level, everything else at info; the health
// probes, which orchestrators call every few seconds, log at debug unless
// they fail.
//
// An error from further down is handed to the app's error handler here
// rather than returned, so the status logged is the one the client receives.
// ip tells the client address; nil falls back to the connection's peer.
func AccessLog(log *slog.Logger, ip ClientIPFunc) fiber.Handler {
	if ip == nil {
		ip = func(c *fiber.Ctx) string { return c.Context().RemoteIP().String() }
	}
	return func(c *fiber.Ctx) error {
		start := time.Now()
		if err := c.Next(); err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				// The problem could not be written; fiber would answer a bare 500.
				log.ErrorContext(c.UserContext(), "write error response",
					"requestId", RequestID(c), "err", herr)
				c.Status(fiber.StatusInternalServerError)
			}
		}
		status := c.Response().StatusCode()
		path := c.Path()
		level := slog.LevelInfo
		switch {
		case isHealthPath(path) && status >= 500:
			// A failing probe is a state, reported by the probe itself, not a bug.
			level = slog.LevelWarn
		case isHealthPath(path):
			level = slog.LevelDebug
		case status >= 500:
			level = slog.LevelError
		}
		ctx := c.UserContext()
		if !log.Enabled(ctx, level) {
			return nil
		}
		log.LogAttrs(ctx, level, "request",
			slog.String("method", c.Method()),
			slog.String("path", path),
			slog.Int("status", status),
			slog.Float64("durationMs", float64(time.Since(start).Microseconds())/1000),
			slog.Int("bytes", bytesOut(c)),
			slog.String("ip", ip(c)),
			slog.String("requestId", RequestID(c)),
			slog.String("userAgent", c.Get(fiber.HeaderUserAgent)),
		)
		return nil
	}
}

func isHealthPath(p string) bool { return p == "/health/live" || p == "/health/ready" }

// bytesOut reports the body size without draining a streamed body (a file
// download), whose size is only known from its Content-Length; -1 means
// unknown.
func bytesOut(c *fiber.Ctx) int {
	resp := c.Response()
	if resp.IsBodyStream() {
		return resp.Header.ContentLength()
	}
	return len(resp.Body())
}

// Values of the headers SecurityHeaders sets (seed §5.8).
const (
	contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
	permissionsPolicy     = "geolocation=(), microphone=(), camera=(), payment=()"
	strictTransport       = "max-age=31536000; includeSubDomains"
)

// SecurityHeaders sets the browser-hardening headers of seed §5.8 on every
// response, errors included: they are set before the rest of the chain runs.
// The Content-Security-Policy is left off /swagger and everything under it,
// whose UI needs inline scripts. HSTS is sent only in production, where the
// service sits behind TLS; on a developer's http://localhost it would pin the
// browser to https. Server and X-Powered-By are removed after the chain, in
// case anything set them.
func SecurityHeaders(production bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		h := &c.Response().Header
		h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		h.Set(fiber.HeaderXFrameOptions, "DENY")
		h.Set(fiber.HeaderReferrerPolicy, "strict-origin-when-cross-origin")
		h.Set(fiber.HeaderPermissionsPolicy, permissionsPolicy)
		h.Set("X-Permitted-Cross-Domain-Policies", "none")
		if !isSwaggerPath(c.Path()) {
			h.Set(fiber.HeaderContentSecurityPolicy, contentSecurityPolicy)
		}
		if production {
			h.Set(fiber.HeaderStrictTransportSecurity, strictTransport)
		}
		err := c.Next()
		h.Del(fiber.HeaderServer)
		h.Del(fiber.HeaderXPoweredBy)
		return err
	}
}

func isSwaggerPath(p string) bool { return p == "/swagger" || strings.HasPrefix(p, "/swagger/") }

// CORS admits cross-origin browser calls from allowedOrigins only. With no
// origins configured (the default) it adds no CORS headers at all, so
// browsers refuse every cross-origin call. Origins must be full origins
// ("https://app.example.com"); fiber's cors panics at start-up on a malformed
// one.
func CORS(allowedOrigins []string) fiber.Handler {
	if len(allowedOrigins) == 0 {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	return cors.New(cors.Config{
		AllowOrigins: strings.Join(allowedOrigins, ","),
		AllowMethods: strings.Join([]string{
			fiber.MethodGet, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete, fiber.MethodOptions,
		}, ","),
		AllowHeaders: strings.Join([]string{
			fiber.HeaderAuthorization, fiber.HeaderContentType, HeaderRequestID,
		}, ","),
		ExposeHeaders: strings.Join([]string{
			HeaderRequestID, fiber.HeaderRetryAfter, fiber.HeaderContentDisposition, fiber.HeaderLocation,
		}, ","),
	})
}

// BodyLimit sets the largest JSON body Bind accepts on this request. The
// server's own limit must be higher (it admits uploads), so the JSON limit is
// enforced per request by Bind rather than by the server.
func BodyLimit(maxBytes int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Locals(localMaxBody, maxBytes)
		return c.Next()
	}
}
