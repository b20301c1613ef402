package identity_test

import (
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// BenchmarkLogin is one POST /api/auth/login through the in-process server
// with the production hash parameters (argon2id m=19456 KiB, t=2, p=1): the
// hash check dominates, plus the user lookup, the token and the refresh
// token row.
func BenchmarkLogin(b *testing.B) {
	app := testkit.Start(b, "sqlite", modules(),
		testkit.WithConfig("identity.password.hash.memoryKiB", 19456),
		testkit.WithConfig("identity.password.hash.iterations", 2),
		testkit.WithConfig("identity.password.hash.parallelism", 1))
	req := testkit.Request{Method: "POST", Path: "/api/auth/login",
		Body: map[string]string{"email": identitytest.AdminEmail, "password": identitytest.AdminPassword}}
	b.ReportAllocs()
	for b.Loop() {
		if r := app.Do(req); r.Status != 200 {
			b.Fatalf("login: %d %s", r.Status, r.Body)
		}
	}
}

// BenchmarkAuthorizedRequest measures a request that passes the guard: a
// valid token of a Drafter on a route needing Contracts.Read. "http" goes
// through the in-process server (middleware, routing, the OpenAPI check of
// the test harness); "guard" calls the guard's middleware alone on a bare
// fasthttp context: token parse, cached user state, cached Casbin decision,
// and the cache-sync check (identity.cacheSyncInterval 1s, as in production).
func BenchmarkAuthorizedRequest(b *testing.B) {
	app := testkit.Start(b, "sqlite", modules(),
		testkit.WithConfig("identity.password.hash.memoryKiB", 64),
		testkit.WithConfig("identity.password.hash.iterations", 1),
		testkit.WithConfig("identity.cacheSyncInterval", "1s"))
	token := identitytest.Token(b, app, identity.RoleDrafter)

	b.Run("http", func(b *testing.B) {
		req := testkit.Request{Method: "GET", Path: "/api/test/contracts", Token: token}
		b.ReportAllocs()
		for b.Loop() {
			if r := app.Do(req); r.Status != 200 {
				b.Fatalf("status %d %s", r.Status, r.Body)
			}
		}
	})

	b.Run("guard", func(b *testing.B) {
		guard, ok := kernel.Lookup[httpx.Guard](app.Kernel.App())
		if !ok {
			b.Fatal("no guard provided")
		}
		f := fiber.New()
		f.Get("/x", guard.Handler(httpx.Require("Contracts.Read")), func(c *fiber.Ctx) error { return c.SendStatus(200) })
		handler := f.Handler()
		var ctx fasthttp.RequestCtx
		authorization := "Bearer " + token
		b.ReportAllocs()
		for b.Loop() {
			ctx.Request.Reset()
			ctx.Response.Reset()
			ctx.Request.SetRequestURI("/x")
			ctx.Request.Header.SetMethod("GET")
			ctx.Request.Header.Set("Authorization", authorization)
			handler(&ctx)
			if s := ctx.Response.StatusCode(); s != 200 {
				b.Fatalf("status %d %s", s, ctx.Response.Body())
			}
		}
	})
}
