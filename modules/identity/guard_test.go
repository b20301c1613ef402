package identity_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"gorm.io/gorm"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/config"
	"github.com/contractflow/contractflow/platform/testkit"
)

// resign signs the claims of a real access token again with another key or
// algorithm, changing claims as asked.
func resign(t *testing.T, token string, method jwt.SigningMethod, key any, change func(jwt.MapClaims)) string {
	t.Helper()
	claims := jwt.MapClaims(claimsOf(t, token))
	if change != nil {
		change(claims)
	}
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAccessTokens(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		_, _, token := identitytest.NewUser(t, app, identity.RoleDrafter)
		secret := []byte(config.DefaultJWTSecret)
		header := func(h string) testkit.Request {
			return testkit.Request{Method: "GET", Path: "/api/test/contracts", Header: map[string]string{"Authorization": h}}
		}
		with := func(tok string) testkit.Request {
			return testkit.Request{Method: "GET", Path: "/api/test/contracts", Token: tok}
		}
		refused := func(name string, req testkit.Request) testkit.Scenario {
			return testkit.Scenario{Name: name, Request: req, Status: 401, Code: "token_invalid",
				Check: func(t *testing.T, r *testkit.Response) {
					if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
						t.Errorf("WWW-Authenticate %q, want Bearer", r.Header.Get("WWW-Authenticate"))
					}
				}}
		}
		parts := strings.Split(token, ".")

		app.Run(t, []testkit.Scenario{
			{Name: "valid", Request: with(token), Status: 200},
			{Name: "the scheme is case-insensitive", Request: header("bearer " + token), Status: 200},
			// The control for the forgeries below: the same claims signed
			// with the service's key pass, so only the key or algorithm differs.
			{Name: "re-signed with the service's key", Request: with(resign(t, token, jwt.SigningMethodHS256, secret, nil)), Status: 200},
			refused("missing", testkit.Request{Method: "GET", Path: "/api/test/contracts"}),
			refused("empty bearer", header("Bearer ")),
			refused("another scheme", header("Basic YWRtaW46YWRtaW4=")),
			refused("token without scheme", header(token)),
			refused("malformed", with("not.a.jwt")),
			refused("garbage", with("garbage")),
			refused("tampered payload", with(parts[0]+"."+strings.TrimRight(parts[1], "=")+"x."+parts[2])),
			refused("signed with another key", with(resign(t, token, jwt.SigningMethodHS256, []byte("another-secret-of-at-least-32-bytes!!"), nil))),
			refused("alg none", with(resign(t, token, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil))),
			refused("alg none without signature part", with(strings.Join(strings.Split(resign(t, token, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil), ".")[:2], "."))),
			refused("HS512 with the service's key", with(resign(t, token, jwt.SigningMethodHS512, secret, nil))),
			refused("another issuer", with(resign(t, token, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["iss"] = "someone-else" }))),
			refused("another audience", with(resign(t, token, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["aud"] = "other-api" }))),
			refused("no expiry", with(resign(t, token, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { delete(c, "exp") }))),
			refused("another user's id", with(resign(t, token, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["sub"] = "0190d8c5-0000-7000-8000-000000000000" }))),
			refused("stale security stamp", with(resign(t, token, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["sst"] = "forged" }))),
			// The roles claim is informative; the guard checks the user's
			// roles as stored, so claiming Admin gains nothing.
			{Name: "claimed roles are not trusted", Request: testkit.Request{Method: "GET", Path: "/api/users",
				Token: resign(t, token, jwt.SigningMethodHS256, secret, func(c jwt.MapClaims) { c["roles"] = []string{"Admin"} })},
				Status: 403, Code: "forbidden"},
			{Name: "the administrator's token", Request: with(admin), Status: 200},
		})

		t.Run("an access token expires after jwt.accessTokenMinutes", func(t *testing.T) {
			_, _, tok := identitytest.NewUser(t, app, identity.RoleDrafter)
			app.Clock.Advance(15*time.Minute - time.Second)
			expect(t, app.Do(with(tok)), 200, "")
			app.Clock.Advance(time.Second)
			r := app.Do(with(tok))
			expect(t, r, 401, "token_invalid")
			if p := r.Problem(t); !strings.Contains(p.Detail, "expired") {
				t.Errorf("detail %q, want it to say the token expired", p.Detail)
			}
		})
		t.Run("a token issued in the future is refused", func(t *testing.T) {
			_, _, tok := identitytest.NewUser(t, app, identity.RoleDrafter)
			app.Clock.Advance(-time.Hour)
			defer app.Clock.Advance(time.Hour)
			expect(t, app.Do(with(tok)), 401, "token_invalid")
		})
	})
}

// Tokens stop working at once when the user is disabled or their security
// stamp changes, not when they expire.
// With a sync interval of an hour the node's own invalidation is all there
// is, so the test also runs that way.
func TestTokensRevokedAtOnce(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		for _, interval := range []string{"0s", "1h"} {
			t.Run("cacheSyncInterval "+interval, func(t *testing.T) {
				testTokensRevokedAtOnce(t, driver, interval)
			})
		}
	})
}

func testTokensRevokedAtOnce(t *testing.T, driver, interval string) {
	app := start(t, driver, testkit.WithConfig("identity.cacheSyncInterval", interval))
	admin := identitytest.AdminToken(t, app)
	cases := []struct {
		name   string
		revoke func(t *testing.T, id, email, token string)
	}{
		{"disabled", func(t *testing.T, id, _, _ string) { setActive(t, app, admin, id, false) }},
		{"password changed", func(t *testing.T, _, _, token string) {
			expect(t, app.Do(testkit.Request{Method: "POST", Path: "/api/auth/change-password", Token: token,
				Body: map[string]string{"currentPassword": identitytest.Password, "newPassword": "Another-Password-1", "confirmNewPassword": "Another-Password-1"}}), 204, "")
		}},
		{"password reset", func(t *testing.T, id, _, _ string) {
			expect(t, app.Do(testkit.Request{Method: "POST", Path: "/api/users/" + id + "/reset-password", Token: admin,
				Body: map[string]string{"newPassword": "Another-Password-1"}}), 204, "")
		}},
		{"roles changed", func(t *testing.T, id, _, _ string) {
			expect(t, app.Do(testkit.Request{Method: "PUT", Path: "/api/users/" + id + "/roles", Token: admin,
				Body: map[string]any{"roles": []string{"Drafter", "Director"}}}), 200, "")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, email, token := identitytest.NewUser(t, app, identity.RoleDrafter)
			s := signIn(t, app, email, identitytest.Password)
			// Warm the guard's cache first.
			expect(t, get(app, "/api/test/contracts", token), 200, "")
			expect(t, get(app, "/api/test/contracts", s.AccessToken), 200, "")
			tc.revoke(t, id, email, token)
			expect(t, get(app, "/api/test/contracts", token), 401, "token_invalid")
			expect(t, get(app, "/api/test/contracts", s.AccessToken), 401, "token_invalid")
			expect(t, refresh(app, s.RefreshToken), 401, "token_invalid")
		})
	}
}

// Every other module's routes are guarded by the same middleware: the
// matrix decides, and Admin passes every policy.
func TestGuardOnAnotherModulesRoutes(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		noRoles := identitytest.Token(t, app)
		app.Run(t, []testkit.Scenario{
			{Name: "without a token", Request: testkit.Request{Method: "GET", Path: "/api/test/contracts"}, Status: 401, Code: "token_invalid"},
			{Name: "a role without Contracts.Read", Request: testkit.Request{Method: "GET", Path: "/api/test/contracts", Token: noRoles}, Status: 403, Code: "forbidden"},
			{Name: "Drafter", Request: testkit.Request{Method: "GET", Path: "/api/test/contracts", Token: identitytest.Token(t, app, identity.RoleDrafter)}, Status: 200},
			{Name: "Admin", Request: testkit.Request{Method: "GET", Path: "/api/test/contracts", Token: admin}, Status: 200},
		})

		// Each of the 48 policies, for Admin, a Drafter and a user holding two roles.
		drafter := identitytest.Token(t, app, identity.RoleDrafter)
		both := identitytest.Token(t, app, identity.RoleEquipment, identity.RoleHrAdmin)
		for _, key := range allMenuKeys {
			for _, action := range actions {
				path := "/api/test/policies/" + key + "/" + action
				if r := get(app, path, admin); r.Status != 200 {
					t.Errorf("Admin on %s.%s: %d", key, action, r.Status)
				}
				if r := get(app, path, noRoles); r.Status != 403 {
					t.Errorf("no roles on %s.%s: %d", key, action, r.Status)
				}
				want := 403
				if designFlags("Drafter", key).has(action) {
					want = 200
				}
				if r := get(app, path, drafter); r.Status != want {
					t.Errorf("Drafter on %s.%s: %d, want %d", key, action, r.Status, want)
				}
				want = 403
				if designFlags("Equipment", key).has(action) || designFlags("HrAdmin", key).has(action) {
					want = 200
				}
				if r := get(app, path, both); r.Status != want {
					t.Errorf("Equipment+HrAdmin on %s.%s: %d, want %d", key, action, r.Status, want)
				}
			}
		}

		// Admin passes by its role, not by its rows: without them (say, a
		// key whose module was enabled after the last seed) it still passes.
		if err := app.Kernel.App().DB.Conn(t.Context()).Exec(
			"DELETE FROM permissions WHERE role_id = (SELECT id FROM roles WHERE name = 'Admin')").Error; err != nil {
			t.Fatal(err)
		}
		savePermission(t, app, admin, identity.RoleDrafter, "Workflows", flags{}) // reloads the matrix
		for _, key := range allMenuKeys {
			for _, action := range actions {
				if r := get(app, "/api/test/policies/"+key+"/"+action, admin); r.Status != 200 {
					t.Errorf("Admin without matrix rows on %s.%s: %d", key, action, r.Status)
				}
			}
		}
	})
}

// queryCounter counts the statements an instance sends to its database.
type queryCounter struct{ n atomic.Int64 }

func countQueries(t testing.TB, app *testkit.App) *queryCounter {
	t.Helper()
	c := &queryCounter{}
	g := app.Kernel.App().DB.Conn(t.Context())
	count := func(*gorm.DB) { c.n.Add(1) }
	cb := g.Callback()
	for _, err := range []error{
		cb.Query().Before("gorm:query").Register("test:count_query", count),
		cb.Row().Before("gorm:row").Register("test:count_row", count),
		cb.Raw().Before("gorm:raw").Register("test:count_raw", count),
		cb.Create().Before("gorm:create").Register("test:count_create", count),
		cb.Update().Before("gorm:update").Register("test:count_update", count),
		cb.Delete().Before("gorm:delete").Register("test:count_delete", count),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Once warm, the guard answers from memory: no statement per request.
func TestGuardDoesNotQueryPerRequest(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		// The global rate limit counts in the database on Postgres; it is
		// not the guard's work, so it is off here.
		app := start(t, driver, testkit.WithConfig("identity.cacheSyncInterval", "1h"), testkit.WithConfig("rateLimit.enabled", false))
		counter := countQueries(t, app)
		drafter := identitytest.Token(t, app, identity.RoleDrafter)
		noRoles := identitytest.Token(t, app)
		if counter.n.Load() == 0 {
			t.Fatal("the counter saw no statement while users were created; it counts nothing")
		}
		expect(t, get(app, "/api/test/contracts", drafter), 200, "")
		expect(t, get(app, "/api/test/contracts", noRoles), 403, "forbidden")
		warm := counter.n.Load()
		for range 20 {
			expect(t, get(app, "/api/test/contracts", drafter), 200, "")
			expect(t, get(app, "/api/test/policies/Users/Read", drafter), 403, "forbidden")
			expect(t, get(app, "/api/test/contracts", noRoles), 403, "forbidden")
		}
		if n := counter.n.Load() - warm; n != 0 {
			t.Errorf("60 guarded requests sent %d statements to the database, want 0", n)
		}
	})
}

// With identity.cacheSyncInterval 1s (the default) the guard asks the
// database whether another node changed something at most once a second,
// however many requests come.
func TestGuardSyncsAtMostOncePerInterval(t *testing.T) {
	t.Parallel()
	app := start(t, "sqlite", testkit.WithConfig("identity.cacheSyncInterval", "1s"), testkit.WithConfig("rateLimit.enabled", false))
	counter := countQueries(t, app)
	drafter := identitytest.Token(t, app, identity.RoleDrafter)
	expect(t, get(app, "/api/test/contracts", drafter), 200, "")
	// The drafter was created after the sync at start: the first sync after
	// an interval sees the change and reloads the caches (three statements).
	// Let it happen before counting, else a slow setup (a loaded machine)
	// puts it inside the counted requests.
	time.Sleep(1100 * time.Millisecond)
	expect(t, get(app, "/api/test/contracts", drafter), 200, "")
	expect(t, get(app, "/api/test/contracts", drafter), 200, "")
	warm := counter.n.Load()
	began := time.Now()
	for range 100 {
		expect(t, get(app, "/api/test/contracts", drafter), 200, "")
	}
	n := counter.n.Load() - warm
	if limit := int64(time.Since(began)/time.Second) + 1; n > limit {
		t.Errorf("100 guarded requests in %v sent %d statements, want at most %d", time.Since(began), n, limit)
	}
}
