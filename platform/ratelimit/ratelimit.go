// Package ratelimit caps requests per client address in fixed one-minute
// windows, under named policies (the global limit, "auth-login", …). Every
// decision is made in memory; when several nodes must enforce one limit
// together, a SharedStore exchanges the counts through the database in
// batches.
package ratelimit

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/httpx"
)

// Window is the length of one counting window.
const Window = time.Minute

// Response headers of an admitted request.
const (
	HeaderLimit     = "X-RateLimit-Limit"
	HeaderRemaining = "X-RateLimit-Remaining"
)

// Limiter applies rate-limit policies to requests.
type Limiter struct {
	store Store
	clk   clock.Clock
	ip    httpx.ClientIPFunc
	log   *slog.Logger
}

// New returns a limiter counting in store, telling time by clk and clients by
// ip. Store failures are logged to log (nil discards them).
func New(store Store, clk clock.Clock, ip httpx.ClientIPFunc, log *slog.Logger) *Limiter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Limiter{store: store, clk: clk, ip: ip, log: log}
}

// Middleware admits perMinute requests per client address and minute under
// policy, and answers the rest 429 rate_limited with a Retry-After of the
// seconds left in the window. Each policy counts separately, so a route under
// both the global limit and "auth-login" spends from both. Requests for which
// skip returns true are neither counted nor limited (skip may be nil).
//
// When the store fails the request is let through and the failure logged: a
// rate-limit outage must not become a service outage.
//
// An empty policy or a perMinute below 1 is a programming error and panics at
// start-up.
func (l *Limiter) Middleware(policy string, perMinute int, skip func(*fiber.Ctx) bool) fiber.Handler {
	if policy == "" || len(policy) > 64 || perMinute < 1 {
		panic(fmt.Sprintf("ratelimit: policy %q needs a name of 1..64 bytes and a positive limit, got %d", policy, perMinute))
	}
	limit := strconv.Itoa(perMinute)
	return func(c *fiber.Ctx) error {
		if skip != nil && skip(c) {
			return c.Next()
		}
		now := l.clk.Now()
		window := now.Truncate(Window)
		key := policy + "|" + l.ip(c)
		n, err := l.store.Hit(c.UserContext(), key, window)
		if err != nil {
			l.log.ErrorContext(c.UserContext(), "rate limit store failed; request let through",
				"policy", policy, "requestId", httpx.RequestID(c), "err", err)
			return c.Next()
		}
		if n > perMinute {
			secs := retryAfter(now, window)
			return apperr.New(apperr.KindRateLimited, "rate_limited",
				fmt.Sprintf("Too many requests. Try again in %d seconds.", secs)).
				With("retryAfter", secs)
		}
		c.Set(HeaderLimit, limit)
		c.Set(HeaderRemaining, strconv.Itoa(perMinute-n))
		return c.Next()
	}
}

// retryAfter is the whole seconds until the window ends, rounded up so that a
// client retrying on time lands in the next window, and at least 1.
func retryAfter(now, window time.Time) int {
	secs := int(math.Ceil(window.Add(Window).Sub(now).Seconds()))
	return max(secs, 1)
}
