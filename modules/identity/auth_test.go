package identity_test

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
)

func TestLogin(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		disabledID, disabledEmail, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		setActive(t, app, admin, disabledID, false)
		loginReq := func(body any) testkit.Request {
			return testkit.Request{Method: "POST", Path: "/api/auth/login", Body: body}
		}

		app.Run(t, []testkit.Scenario{
			{Name: "success answers tokens and the user",
				Request: loginReq(map[string]string{"email": identitytest.AdminEmail, "password": identitytest.AdminPassword}),
				Status:  200,
				Check: func(t *testing.T, r *testkit.Response) {
					var out tokens
					r.JSON(t, &out)
					if out.AccessToken == "" || out.RefreshToken == "" || out.TokenType != "Bearer" || out.ExpiresIn != 15*60 {
						t.Errorf("token response %+v, want both tokens, Bearer and 900 seconds", out)
					}
					if out.User.Email != identitytest.AdminEmail || len(out.User.Roles) != 1 || out.User.Roles[0] != identity.RoleAdmin {
						t.Errorf("user %+v", out.User)
					}
					c := claimsOf(t, out.AccessToken)
					for _, k := range []string{"sub", "email", "name", "roles", "sst", "jti", "iat", "exp", "iss", "aud"} {
						if _, ok := c[k]; !ok {
							t.Errorf("access token lacks claim %q: %v", k, c)
						}
					}
					if c["sub"] != out.User.ID || c["iss"] != "contractflow" {
						t.Errorf("claims %v", c)
					}
					if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 15*60 || int64(iat) != t0.Unix() {
						t.Errorf("iat %v exp %v, want issued now for 15 minutes", iat, exp)
					}
					if len(out.RefreshToken) < 43 {
						t.Errorf("refresh token %q is shorter than 256 random bits", out.RefreshToken)
					}
				}},
			{Name: "email is trimmed and case-insensitive",
				Request: loginReq(map[string]string{"email": "  ADMIN@ContractFlow.Local \t", "password": identitytest.AdminPassword}),
				Status:  200},
			{Name: "property names match case-insensitively",
				Request: loginReq(map[string]string{"Email": identitytest.AdminEmail, "PASSWORD": identitytest.AdminPassword}),
				Status:  200},
			{Name: "the password is case-sensitive",
				Request: loginReq(map[string]string{"email": identitytest.AdminEmail, "password": strings.ToLower(identitytest.AdminPassword)}),
				Status:  400, Code: "invalid_credentials"},
			{Name: "disabled account", Request: loginReq(map[string]string{"email": disabledEmail, "password": identitytest.Password}),
				Status: 400, Code: "account_disabled"},
			{Name: "disabled account with a wrong password reveals nothing",
				Request: loginReq(map[string]string{"email": disabledEmail, "password": "wrong-password-1"}),
				Status:  400, Code: "invalid_credentials"},
			{Name: "malformed JSON", Request: loginReq(`{"email": "admin@contractflow.local",`), Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
			{Name: "empty body", Request: loginReq(""), Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
			{Name: "a JSON array", Request: loginReq(`[]`), Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
			{Name: "missing fields", Request: loginReq(map[string]string{}), Status: 400, Code: "validation_failed", Fields: []string{"Email", "Password"}},
			{Name: "wrong types", Request: loginReq(`{"email": 42, "password": "x"}`), Status: 400, Code: "validation_failed", Fields: []string{"Email"}},
			{Name: "overlong email", Request: loginReq(map[string]string{"email": strings.Repeat("a", 250) + "@x.io", "password": "x"}),
				Status: 400, Code: "validation_failed", Fields: []string{"Email"}},
			{Name: "overlong password", Request: loginReq(map[string]string{"email": identitytest.AdminEmail, "password": strings.Repeat("p", 129)}),
				Status: 400, Code: "validation_failed", Fields: []string{"Password"}},
			{Name: "not JSON", Request: testkit.Request{Method: "POST", Path: "/api/auth/login", Body: "email=a&password=b", ContentType: "application/x-www-form-urlencoded"},
				Status: 415, Code: "unsupported_media_type"},
		})

		t.Run("unknown email and wrong password answer alike", func(t *testing.T) {
			unknown := login(app, "nobody@contractflow.local", "Whatever-Password-1")
			wrong := login(app, identitytest.AdminEmail, "Whatever-Password-1")
			expect(t, unknown, 400, "invalid_credentials")
			expect(t, wrong, 400, "invalid_credentials")
			if a, b := withoutRequestParts(t, unknown.Body), withoutRequestParts(t, wrong.Body); !reflect.DeepEqual(a, b) {
				t.Errorf("bodies differ:\nunknown email:  %v\nwrong password: %v", a, b)
			}
			if unknown.Header.Get("Content-Type") != wrong.Header.Get("Content-Type") {
				t.Errorf("content types differ")
			}
		})
	})
}

func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver,
			testkit.WithConfig("rateLimit.loginPerMinute", 5),
			testkit.WithConfig("http.trustedProxies", []string{"0.0.0.0"}))
		from := func(ip string) *testkit.Response {
			return app.Do(testkit.Request{Method: "POST", Path: "/api/auth/login", Header: map[string]string{"X-Forwarded-For": ip},
				Body: map[string]string{"email": identitytest.AdminEmail, "password": identitytest.AdminPassword}})
		}
		for i := 1; i <= 5; i++ {
			if r := from("203.0.113.7"); r.Status != 200 {
				t.Fatalf("login %d within the minute: status %d: %s", i, r.Status, r.Body)
			}
		}
		r := from("203.0.113.7")
		expect(t, r, 429, "rate_limited")
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || secs < 1 || secs > 60 {
			t.Errorf("Retry-After %q, want 1..60 seconds", r.Header.Get("Retry-After"))
		}
		// Failed logins count as well: the limit is per address, not per account.
		if r := app.Do(testkit.Request{Method: "POST", Path: "/api/auth/login", Header: map[string]string{"X-Forwarded-For": "203.0.113.7"},
			Body: map[string]string{"email": "x@y.z", "password": "x"}}); r.Status != 429 {
			t.Errorf("7th attempt: status %d, want 429", r.Status)
		}
		expect(t, from("203.0.113.8"), 200, "")
		// Other routes are not under the login policy.
		expect(t, app.Do(testkit.Request{Method: "GET", Path: "/api/roles", Token: signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword).AccessToken,
			Header: map[string]string{"X-Forwarded-For": "203.0.113.7"}}), 200, "")
		// The next minute admits the address again.
		app.Clock.Advance(time.Minute)
		expect(t, from("203.0.113.7"), 200, "")
	})
}

func TestLockout(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		fail := func(t *testing.T, email string, n int) {
			t.Helper()
			for i := 0; i < n; i++ {
				expect(t, login(app, email, "Wrong-Password-123"), 400, "invalid_credentials")
			}
		}

		t.Run("five failures lock a new user for fifteen minutes", func(t *testing.T) {
			id, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
			fail(t, email, 5)
			lockedAt := app.Clock.Now()
			until := lockedAt.Add(15 * time.Minute).UTC().Format(time.RFC3339)

			r := login(app, email, identitytest.Password)
			expect(t, r, 400, "account_locked")
			var body struct {
				Detail      string `json:"detail"`
				LockedUntil string `json:"lockedUntil"`
			}
			r.JSON(t, &body)
			if body.LockedUntil != until || !strings.Contains(body.Detail, until) {
				t.Errorf("lockedUntil %q, detail %q; want %s in both", body.LockedUntil, body.Detail, until)
			}
			// The lock is checked before the password: a wrong one says locked too.
			expect(t, login(app, email, "Wrong-Password-123"), 400, "account_locked")
			u := getUser(t, app, admin, id)
			if !u.IsLocked || u.LockoutEnd == nil || !u.LockoutEnd.Equal(lockedAt.Add(15*time.Minute)) {
				t.Errorf("user while locked: isLocked %v lockoutEnd %v", u.IsLocked, u.LockoutEnd)
			}

			app.Clock.Advance(15*time.Minute - time.Second)
			expect(t, login(app, email, identitytest.Password), 400, "account_locked")
			app.Clock.Advance(time.Second)
			expect(t, login(app, email, identitytest.Password), 200, "")
			admin = identitytest.AdminToken(t, app) // the old one expired meanwhile
			if u := getUser(t, app, admin, id); u.IsLocked || u.LockoutEnd != nil {
				t.Errorf("user after the lock expired: isLocked %v lockoutEnd %v", u.IsLocked, u.LockoutEnd)
			}
		})

		t.Run("a success resets the failure count", func(t *testing.T) {
			_, email, _ := identitytest.NewUser(t, app)
			fail(t, email, 4)
			expect(t, login(app, email, identitytest.Password), 200, "")
			fail(t, email, 4)
			expect(t, login(app, email, identitytest.Password), 200, "")
		})

		t.Run("the seeded administrator is locked out too", func(t *testing.T) {
			fail(t, identitytest.AdminEmail, 5)
			expect(t, login(app, identitytest.AdminEmail, identitytest.AdminPassword), 400, "account_locked")
			app.Clock.Advance(15 * time.Minute)
			admin = identitytest.AdminToken(t, app)
		})

		t.Run("the unlock endpoint clears the lock and the count", func(t *testing.T) {
			id, email, _ := identitytest.NewUser(t, app)
			fail(t, email, 5)
			expect(t, login(app, email, identitytest.Password), 400, "account_locked")
			expect(t, app.Do(testkit.Request{Method: "POST", Path: "/api/users/" + id + "/unlock", Token: admin}), 204, "")
			if u := getUser(t, app, admin, id); u.IsLocked {
				t.Error("still locked after unlock")
			}
			expect(t, login(app, email, identitytest.Password), 200, "")

			otherID, other, _ := identitytest.NewUser(t, app)
			fail(t, other, 4)
			expect(t, app.Do(testkit.Request{Method: "POST", Path: "/api/users/" + otherID + "/unlock", Token: admin}), 204, "")
			fail(t, other, 4)
			expect(t, login(app, other, identitytest.Password), 200, "")
		})

		t.Run("an administrator's password reset clears the lock", func(t *testing.T) {
			id, email, _ := identitytest.NewUser(t, app)
			fail(t, email, 5)
			expect(t, app.Do(testkit.Request{Method: "POST", Path: "/api/users/" + id + "/reset-password", Token: admin,
				Body: map[string]string{"newPassword": "Fresh-Password-2026"}}), 204, "")
			expect(t, login(app, email, "Fresh-Password-2026"), 200, "")
		})
	})
}

func TestLockoutConfiguration(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		t.Run("attempts and minutes come from configuration", func(t *testing.T) {
			app := start(t, driver,
				testkit.WithConfig("identity.lockout.maxFailedAttempts", 3),
				testkit.WithConfig("identity.lockout.minutes", 2))
			_, email, _ := identitytest.NewUser(t, app)
			for range 2 {
				expect(t, login(app, email, "Wrong-Password-123"), 400, "invalid_credentials")
			}
			expect(t, login(app, email, identitytest.Password), 200, "")
			for range 3 {
				expect(t, login(app, email, "Wrong-Password-123"), 400, "invalid_credentials")
			}
			expect(t, login(app, email, identitytest.Password), 400, "account_locked")
			app.Clock.Advance(2*time.Minute - time.Second)
			expect(t, login(app, email, identitytest.Password), 400, "account_locked")
			app.Clock.Advance(time.Second)
			expect(t, login(app, email, identitytest.Password), 200, "")
		})
		t.Run("concurrent failures all count", func(t *testing.T) {
			app := start(t, driver)
			_, email, _ := identitytest.NewUser(t, app)
			var wg sync.WaitGroup
			for range 5 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					login(app, email, "Wrong-Password-123")
				}()
			}
			wg.Wait()
			expect(t, login(app, email, identitytest.Password), 400, "account_locked")
		})
		t.Run("lockout can be off for new users", func(t *testing.T) {
			app := start(t, driver, testkit.WithConfig("identity.lockout.allowedForNewUsers", false))
			_, email, _ := identitytest.NewUser(t, app)
			for range 7 {
				expect(t, login(app, email, "Wrong-Password-123"), 400, "invalid_credentials")
			}
			expect(t, login(app, email, identitytest.Password), 200, "")
		})
	})
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)

		t.Run("rotation, then reuse revokes the family", func(t *testing.T) {
			first := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
			other := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
			r := refresh(app, first.RefreshToken)
			expect(t, r, 200, "")
			var second tokens
			r.JSON(t, &second)
			if second.RefreshToken == first.RefreshToken || second.AccessToken == first.AccessToken || second.TokenType != "Bearer" {
				t.Fatalf("refresh did not rotate: %+v", second)
			}
			if second.User.Email != identitytest.AdminEmail {
				t.Errorf("refresh user %+v", second.User)
			}
			expect(t, get(app, "/api/auth/me", second.AccessToken), 200, "")

			expect(t, refresh(app, first.RefreshToken), 401, "token_reused")
			expect(t, refresh(app, second.RefreshToken), 401, "token_invalid")
			expect(t, refresh(app, first.RefreshToken), 401, "")
			// Another sign-in of the same user is its own family.
			expect(t, refresh(app, other.RefreshToken), 200, "")
		})

		t.Run("bad input", func(t *testing.T) {
			app.Run(t, []testkit.Scenario{
				{Name: "garbage", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: map[string]string{"refreshToken": "not-a-token"}},
					Status: 401, Code: "token_invalid"},
				// Issue 18: any string that is not a live refresh token is 401,
				// whatever its length or shape.
				{Name: "an access token is no refresh token", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: map[string]string{"refreshToken": admin}},
					Status: 401, Code: "token_invalid"},
				{Name: "a long random string", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: map[string]string{"refreshToken": strings.Repeat("x9-_", 2000)}},
					Status: 401, Code: "token_invalid"},
				{Name: "Vietnamese text", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: map[string]string{"refreshToken": "Nguyễn Thị Ánh"}},
					Status: 401, Code: "token_invalid"},
				{Name: "an access token to logout", Request: testkit.Request{Method: "POST", Path: "/api/auth/logout", Token: admin, Body: map[string]string{"refreshToken": admin}},
					Status: 204},
				{Name: "missing", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: map[string]string{}},
					Status: 400, Code: "validation_failed", Fields: []string{"RefreshToken"}},
				{Name: "wrong type", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: `{"refreshToken": ["a"]}`},
					Status: 400, Code: "validation_failed", Fields: []string{"RefreshToken"}},
				{Name: "malformed", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: `{"refreshToken":`},
					Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
			})
		})

		t.Run("a deleted user's refresh token", func(t *testing.T) {
			id, email, _ := identitytest.NewUser(t, app)
			s := signIn(t, app, email, identitytest.Password)
			if err := app.Kernel.App().DB.Conn(t.Context()).Exec("DELETE FROM users WHERE id = ?", id).Error; err != nil {
				t.Fatal(err)
			}
			expect(t, refresh(app, s.RefreshToken), 401, "token_invalid")
		})

		t.Run("a disabled user's refresh token", func(t *testing.T) {
			id, email, _ := identitytest.NewUser(t, app)
			s := signIn(t, app, email, identitytest.Password)
			setActive(t, app, admin, id, false)
			expect(t, refresh(app, s.RefreshToken), 401, "token_invalid")
			setActive(t, app, admin, id, true)
			expect(t, refresh(app, s.RefreshToken), 401, "token_invalid")
		})

		t.Run("concurrent refreshes of one token: exactly one succeeds", func(t *testing.T) {
			s := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
			const n = 6
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = refresh(app, s.RefreshToken).Status
				}()
			}
			wg.Wait()
			ok := 0
			for _, st := range statuses {
				switch st {
				case 200:
					ok++
				case 401:
				default:
					t.Errorf("status %d, want 200 or 401", st)
				}
			}
			if ok != 1 {
				t.Errorf("statuses %v: %d successes, want exactly 1", statuses, ok)
			}
		})

		t.Run("a refresh token expires after jwt.refreshTokenDays", func(t *testing.T) {
			early := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
			late := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
			app.Clock.Advance(7*24*time.Hour - time.Minute)
			expect(t, refresh(app, early.RefreshToken), 200, "")
			app.Clock.Advance(time.Minute)
			expect(t, refresh(app, late.RefreshToken), 401, "token_invalid")
		})
	})
}

func TestRefreshTokenLifetimeFromConfig(t *testing.T) {
	t.Parallel()
	app := start(t, "sqlite", testkit.WithConfig("jwt.refreshTokenDays", 1))
	s := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
	app.Clock.Advance(24 * time.Hour)
	expect(t, refresh(app, s.RefreshToken), 401, "token_invalid")
}

func TestMe(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		type me struct {
			userDTO
			Permissions map[string]flags `json:"permissions"`
		}
		read := func(t *testing.T, token string) me {
			t.Helper()
			r := get(app, "/api/auth/me", token)
			expect(t, r, 200, "")
			var m me
			r.JSON(t, &m)
			return m
		}
		admin := read(t, identitytest.AdminToken(t, app))
		if admin.Email != identitytest.AdminEmail || admin.FullName == "" || !admin.IsActive || len(admin.Roles) != 1 {
			t.Errorf("admin me %+v", admin.userDTO)
		}
		mustEqualSet(t, "admin permission keys", sortedKeys(admin.Permissions), allMenuKeys)
		for k, f := range admin.Permissions {
			if f != (flags{true, true, true, true}) {
				t.Errorf("admin on %s: %s", k, fmtFlags(f))
			}
		}

		id, email, token := identitytest.NewUser(t, app, identity.RoleHrAdmin, identity.RoleDrafter)
		m := read(t, token)
		if m.ID != id || m.Email != email {
			t.Errorf("me %+v, want user %s", m.userDTO, id)
		}
		mustEqualSet(t, "roles", m.Roles, []string{"Drafter", "HrAdmin"})
		mustEqualSet(t, "permission keys", sortedKeys(m.Permissions), allMenuKeys)
		for _, k := range allMenuKeys {
			a, b := designFlags("Drafter", k), designFlags("HrAdmin", k)
			want := flags{a.Read || b.Read, a.Create || b.Create, a.Update || b.Update, a.Delete || b.Delete}
			if m.Permissions[k] != want {
				t.Errorf("Drafter+HrAdmin on %s: %s, want the union %s", k, fmtFlags(m.Permissions[k]), fmtFlags(want))
			}
		}
		none := read(t, identitytest.Token(t, app))
		if len(none.Roles) != 0 || none.Roles == nil {
			t.Errorf("roles of a user without roles: %#v, want []", none.Roles)
		}
		for k, f := range none.Permissions {
			if f != (flags{}) {
				t.Errorf("user without roles on %s: %s", k, fmtFlags(f))
			}
		}
		expect(t, get(app, "/api/auth/me", ""), 401, "token_invalid")
	})
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		_, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		s := signIn(t, app, email, identitytest.Password)
		change := func(token string, current, next, confirm any) testkit.Request {
			body := map[string]any{}
			for k, v := range map[string]any{"currentPassword": current, "newPassword": next, "confirmNewPassword": confirm} {
				if v != nil {
					body[k] = v
				}
			}
			return testkit.Request{Method: "POST", Path: "/api/auth/change-password", Token: token, Body: body}
		}
		const next = "Brand-New-Secret-9"

		app.Run(t, []testkit.Scenario{
			{Name: "unauthenticated", Request: change("", identitytest.Password, next, next), Status: 401, Code: "token_invalid"},
			{Name: "wrong current password", Request: change(s.AccessToken, "Not-The-Password-1", next, next),
				Status: 400, Code: "validation_failed", Fields: []string{"CurrentPassword"}},
			{Name: "new password under 12 characters", Request: change(s.AccessToken, identitytest.Password, "Short-Pw-11", "Short-Pw-11"),
				Status: 400, Code: "validation_failed", Fields: []string{"NewPassword"}},
			{Name: "new password equals the current one", Request: change(s.AccessToken, identitytest.Password, identitytest.Password, identitytest.Password),
				Status: 400, Code: "validation_failed", Fields: []string{"NewPassword"}},
			{Name: "confirmation differs", Request: change(s.AccessToken, identitytest.Password, next, next+"x"),
				Status: 400, Code: "validation_failed", Fields: []string{"ConfirmNewPassword"}},
			{Name: "everything wrong at once", Request: change(s.AccessToken, "Not-The-Password-1", "short", "other"),
				Status: 400, Code: "validation_failed", Fields: []string{"CurrentPassword", "NewPassword", "ConfirmNewPassword"}},
			{Name: "missing fields", Request: change(s.AccessToken, nil, nil, nil),
				Status: 400, Code: "validation_failed", Fields: []string{"CurrentPassword", "NewPassword", "ConfirmNewPassword"}},
			{Name: "overlong new password", Request: change(s.AccessToken, identitytest.Password, strings.Repeat("x", 129), strings.Repeat("x", 129)),
				Status: 400, Code: "validation_failed", Fields: []string{"NewPassword"}},
			{Name: "wrong type", Request: change(s.AccessToken, identitytest.Password, 123456789012, next),
				Status: 400, Code: "validation_failed", Fields: []string{"NewPassword"}},
		})
		// Nothing above changed the password or revoked the sign-in.
		expect(t, get(app, "/api/auth/me", s.AccessToken), 200, "")

		expect(t, app.Do(change(s.AccessToken, identitytest.Password, next, next)), 204, "")
		expect(t, login(app, email, identitytest.Password), 400, "invalid_credentials")
		expect(t, refresh(app, s.RefreshToken), 401, "token_invalid")
		expect(t, get(app, "/api/auth/me", s.AccessToken), 401, "token_invalid")
		again := signIn(t, app, email, next)

		// Exactly 12 characters is enough.
		expect(t, app.Do(change(again.AccessToken, next, "Twelve-Chars", "Twelve-Chars")), 204, "")
		expect(t, login(app, email, "Twelve-Chars"), 200, "")
	})
}

func TestLogout(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		_, emailA, _ := identitytest.NewUser(t, app)
		_, emailB, _ := identitytest.NewUser(t, app)
		a1 := signIn(t, app, emailA, identitytest.Password)
		a2 := signIn(t, app, emailA, identitytest.Password)
		b := signIn(t, app, emailB, identitytest.Password)
		logout := func(access, refreshToken string) *testkit.Response {
			return app.Do(testkit.Request{Method: "POST", Path: "/api/auth/logout", Token: access, Body: map[string]string{"refreshToken": refreshToken}})
		}

		expect(t, logout("", a1.RefreshToken), 401, "token_invalid")
		expect(t, app.Do(testkit.Request{Method: "POST", Path: "/api/auth/logout", Token: a1.AccessToken, Body: map[string]string{}}), 400, "validation_failed")
		// Someone else's refresh token is left alone.
		expect(t, logout(b.AccessToken, a1.RefreshToken), 204, "")
		r := refresh(app, a1.RefreshToken)
		expect(t, r, 200, "")
		var rotated tokens
		r.JSON(t, &rotated)

		expect(t, logout(a1.AccessToken, rotated.RefreshToken), 204, "")
		expect(t, refresh(app, rotated.RefreshToken), 401, "token_invalid")
		// The other sign-in of the same user survives.
		expect(t, refresh(app, a2.RefreshToken), 200, "")
		expect(t, refresh(app, b.RefreshToken), 200, "")
		// Logging out twice, or with an unknown token, answers alike.
		expect(t, logout(a1.AccessToken, rotated.RefreshToken), 204, "")
		expect(t, logout(a1.AccessToken, "unknown"), 204, "")
	})
}
