package identity_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
)

// createUser posts a user as the administrator and returns its id.
func createUser(t testing.TB, app *testkit.App, admin, email, fullName string, roles ...string) string {
	t.Helper()
	if roles == nil {
		roles = []string{}
	}
	r := app.Do(testkit.Request{Method: "POST", Path: "/api/users", Token: admin,
		Body: map[string]any{"email": email, "fullName": fullName, "password": identitytest.Password, "roles": roles}})
	expect(t, r, 201, "")
	var out struct{ ID string }
	r.JSON(t, &out)
	return out.ID
}

func emails(p page) []string {
	out := make([]string, len(p.Items))
	for i, u := range p.Items {
		out[i] = u.Email
	}
	return out
}

func TestListUsers(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		// Created a second apart so createdAt orders them.
		app.Clock.Advance(time.Second)
		createUser(t, app, admin, "anna@example.com", "Anna Able", identity.RoleDrafter)
		app.Clock.Advance(time.Second)
		createUser(t, app, admin, "bob@example.com", "Bob Baker_%", identity.RoleDrafter, identity.RoleHrAdmin)
		app.Clock.Advance(time.Second)
		carl := createUser(t, app, admin, "Carl@Example.com", "Carl Cole", identity.RoleDirector)
		setActive(t, app, admin, carl, false)

		list := func(query string, want ...string) testkit.Scenario {
			return testkit.Scenario{Name: "?" + query, Request: testkit.Request{Method: "GET", Path: "/api/users?" + query, Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var p page
					r.JSON(t, &p)
					if got := emails(p); !slices.Equal(got, want) {
						t.Errorf("emails %v, want %v", got, want)
					}
				}}
		}
		all := []string{"admin@contractflow.local", "anna@example.com", "bob@example.com", "Carl@Example.com"}
		bad := func(query, field string) testkit.Scenario {
			return testkit.Scenario{Name: "?" + query, Request: testkit.Request{Method: "GET", Path: "/api/users?" + query, Token: admin},
				Status: 400, Code: "validation_failed", Fields: []string{field}}
		}
		app.Run(t, []testkit.Scenario{
			{Name: "paged wrapper", Request: testkit.Request{Method: "GET", Path: "/api/users", Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var p page
					r.JSON(t, &p)
					if p.Page != 1 || p.PageSize != 20 || p.TotalCount != 4 || p.TotalPages != 1 || !slices.Equal(emails(p), all) {
						t.Errorf("page %+v", p)
					}
					for _, u := range p.Items {
						if u.Email == "bob@example.com" && !slices.Equal(u.Roles, []string{"Drafter", "HrAdmin"}) {
							t.Errorf("bob's roles %v", u.Roles)
						}
					}
				}},
			list("search=ANNA", "anna@example.com"),
			list("search=baker", "bob@example.com"),
			list("search=example.com", "anna@example.com", "bob@example.com", "Carl@Example.com"),
			list("search=%25", "bob@example.com"),
			list("search=_", "bob@example.com"),
			list("search=nobody"),
			list("isActive=false", "Carl@Example.com"),
			list("isActive=true", "admin@contractflow.local", "anna@example.com", "bob@example.com"),
			list("role=Drafter", "anna@example.com", "bob@example.com"),
			list("role=Admin", "admin@contractflow.local"),
			list("role=Finance"),
			list("role=Drafter&isActive=true&search=bob", "bob@example.com"),
			list("sort=-email", "Carl@Example.com", "bob@example.com", "anna@example.com", "admin@contractflow.local"),
			list("sort=fullName", "admin@contractflow.local", "anna@example.com", "bob@example.com", "Carl@Example.com"),
			list("sort=-fullName", "Carl@Example.com", "bob@example.com", "anna@example.com", "admin@contractflow.local"),
			list("sort=createdAt", all...),
			list("sort=-createdAt", "Carl@Example.com", "bob@example.com", "anna@example.com", "admin@contractflow.local"),
			list("sort=-createdAt&pageSize=2&page=2", "anna@example.com", "admin@contractflow.local"),
			{Name: "second page", Request: testkit.Request{Method: "GET", Path: "/api/users?pageSize=3&page=2", Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var p page
					r.JSON(t, &p)
					if p.Page != 2 || p.PageSize != 3 || p.TotalCount != 4 || p.TotalPages != 2 || !slices.Equal(emails(p), []string{"Carl@Example.com"}) {
						t.Errorf("page %+v", p)
					}
				}},
			{Name: "past the last page", Request: testkit.Request{Method: "GET", Path: "/api/users?page=9", Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					if !strings.Contains(string(r.Body), `"items":[]`) {
						t.Errorf("body %s, want an empty items array", r.Body)
					}
				}},
			bad("sort=password", "Sort"),
			bad("sort=email,nope", "Sort"),
			bad("pageSize=0", "PageSize"),
			bad("pageSize=101", "PageSize"),
			bad("page=0", "Page"),
			bad("page=x", "Page"),
			bad("role=Nope", "Role"),
			bad("isActive=maybe", "IsActive"),
			bad("search="+strings.Repeat("s", 201), "Search"),
		})
	})
}

func TestGetUser(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		id := createUser(t, app, admin, "dora@example.com", "Dora Dale", identity.RoleHrAdmin, identity.RoleDrafter)
		app.Run(t, []testkit.Scenario{
			{Name: "found", Request: testkit.Request{Method: "GET", Path: "/api/users/" + id, Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var u userDTO
					r.JSON(t, &u)
					if u.ID != id || u.Email != "dora@example.com" || u.FullName != "Dora Dale" || !u.IsActive || u.IsLocked ||
						u.LockoutEnd != nil || !u.CreatedAt.Equal(t0) || !slices.Equal(u.Roles, []string{"Drafter", "HrAdmin"}) || u.Version != 1 {
						t.Errorf("user %+v", u)
					}
					if strings.Contains(strings.ToLower(string(r.Body)), "password") || strings.Contains(string(r.Body), "securityStamp") {
						t.Errorf("the user shows secrets: %s", r.Body)
					}
				}},
			{Name: "unknown id", Request: testkit.Request{Method: "GET", Path: "/api/users/" + uuid.NewString(), Token: admin}, Status: 404, Code: "not_found"},
			{Name: "not a UUID", Request: testkit.Request{Method: "GET", Path: "/api/users/not-a-uuid", Token: admin}, Status: 404, Code: "not_found"},
			{Name: "SQL in the id", Request: testkit.Request{Method: "GET", Path: "/api/users/1'%20OR%20'1'='1", Token: admin}, Status: 404, Code: "not_found"},
		})
	})
}

func TestCreateUser(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		create := func(body any) testkit.Request {
			return testkit.Request{Method: "POST", Path: "/api/users", Token: admin, Body: body}
		}
		user := func(email, password string, roles ...string) map[string]any {
			if roles == nil {
				roles = []string{}
			}
			return map[string]any{"email": email, "fullName": "Eve Example", "password": password, "roles": roles}
		}
		long64 := strings.Repeat("Passphrase-64!", 5)[:64]
		long128 := strings.Repeat("x", 128)

		created := testkit.Scenario{Name: "created", Request: create(map[string]any{"email": "  Eve@Example.com ", "fullName": " Eve Example ",
			"password": identitytest.Password, "roles": []string{"HrAdmin", "Drafter", "Drafter"}}), Status: 201,
			Check: func(t *testing.T, r *testkit.Response) {
				var out struct{ ID string }
				r.JSON(t, &out)
				if r.Header.Get("Location") != "/api/users/"+out.ID {
					t.Errorf("Location %q, want /api/users/%s", r.Header.Get("Location"), out.ID)
				}
				u := getUser(t, app, admin, out.ID)
				if u.Email != "Eve@Example.com" || u.FullName != "Eve Example" || !u.IsActive || !slices.Equal(u.Roles, []string{"Drafter", "HrAdmin"}) {
					t.Errorf("created user %+v", u)
				}
				signIn(t, app, "eve@example.com", identitytest.Password)
			}}
		app.Run(t, []testkit.Scenario{created})

		before := countRows(t, app, "users")
		app.Run(t, []testkit.Scenario{
			{Name: "duplicate email in other case", Request: create(user("EVE@example.COM", identitytest.Password)), Status: 409, Code: "duplicate_email"},
			{Name: "duplicate email with spaces", Request: create(user(" eve@example.com", identitytest.Password)), Status: 409, Code: "duplicate_email"},
			{Name: "invalid email", Request: create(user("not-an-email", identitytest.Password)), Status: 400, Code: "validation_failed", Fields: []string{"Email"}},
			{Name: "overlong email", Request: create(user(strings.Repeat("e", 250)+"@x.io", identitytest.Password)), Status: 400, Code: "validation_failed", Fields: []string{"Email"}},
			{Name: "password under identity.password.requiredLength", Request: create(user("f@example.com", "Seven-7")), Status: 400, Code: "validation_failed", Fields: []string{"Password"}},
			{Name: "129-character password", Request: create(user("f@example.com", long128+"x")), Status: 400, Code: "validation_failed", Fields: []string{"Password"}},
			{Name: "unknown role", Request: create(user("f@example.com", identitytest.Password, "Drafter", "Emperor")), Status: 400, Code: "validation_failed", Fields: []string{"Roles"}},
			{Name: "missing fields", Request: create(map[string]any{}), Status: 400, Code: "validation_failed", Fields: []string{"Email", "FullName", "Password"}},
			{Name: "blank full name", Request: create(map[string]any{"email": "f@example.com", "fullName": "   ", "password": identitytest.Password}),
				Status: 400, Code: "validation_failed", Fields: []string{"FullName"}},
			{Name: "overlong full name", Request: create(map[string]any{"email": "f@example.com", "fullName": strings.Repeat("n", 201), "password": identitytest.Password}),
				Status: 400, Code: "validation_failed", Fields: []string{"FullName"}},
			{Name: "roles of the wrong type", Request: create(map[string]any{"email": "f@example.com", "fullName": "F", "password": identitytest.Password, "roles": "Admin"}),
				Status: 400, Code: "validation_failed", Fields: []string{"Roles"}},
			{Name: "malformed JSON", Request: create(`{"email":"f@example.com",`), Status: 400, Code: "validation_failed", Fields: []string{"Body"}},
			{Name: "not JSON", Request: testkit.Request{Method: "POST", Path: "/api/users", Token: admin, Body: "email=f", ContentType: "text/plain"},
				Status: 415, Code: "unsupported_media_type"},
		})
		if n := countRows(t, app, "users"); n != before {
			t.Errorf("refused requests wrote users: %d rows, want %d", n, before)
		}

		app.Run(t, []testkit.Scenario{
			{Name: "password of exactly requiredLength", Request: create(user("g@example.com", "Eight-88")), Status: 201},
			{Name: "64-character password", Request: create(user("h@example.com", long64)), Status: 201,
				Check: func(t *testing.T, r *testkit.Response) { signIn(t, app, "h@example.com", long64) }},
			{Name: "128-character password", Request: create(user("i@example.com", long128)), Status: 201,
				Check: func(t *testing.T, r *testkit.Response) { signIn(t, app, "i@example.com", long128) }},
			{Name: "no roles", Request: create(map[string]any{"email": "j@example.com", "fullName": "J", "password": identitytest.Password}), Status: 201,
				Check: func(t *testing.T, r *testkit.Response) {
					var out struct{ ID string }
					r.JSON(t, &out)
					if u := getUser(t, app, admin, out.ID); u.Roles == nil || len(u.Roles) != 0 {
						t.Errorf("roles %#v, want []", u.Roles)
					}
				}},
			{Name: "server-owned properties are ignored", Request: create(map[string]any{"email": "k@example.com", "fullName": "K", "password": identitytest.Password,
				"id": "00000000-0000-0000-0000-000000000001", "isActive": false, "isLocked": true, "version": 9}), Status: 201,
				Check: func(t *testing.T, r *testkit.Response) {
					var out struct{ ID string }
					r.JSON(t, &out)
					u := getUser(t, app, admin, out.ID)
					if u.ID == "00000000-0000-0000-0000-000000000001" || !u.IsActive || u.IsLocked || u.Version != 1 {
						t.Errorf("user %+v took server-owned properties from the body", u)
					}
				}},
		})
		if n := countRows(t, app, "users"); n != before+5 {
			t.Errorf("%d users, want %d", n, before+5)
		}
	})
}

func TestUpdateUser(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
		id, email, token := identitytest.NewUser(t, app, identity.RoleDrafter)
		put := func(id string, body any) testkit.Request {
			return testkit.Request{Method: "PUT", Path: "/api/users/" + id, Token: admin.AccessToken, Body: body}
		}

		app.Run(t, []testkit.Scenario{
			{Name: "rename", Request: put(id, map[string]any{"fullName": " Renamed User ", "isActive": true, "version": 1}), Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var u userDTO
					r.JSON(t, &u)
					if u.FullName != "Renamed User" || !u.IsActive || u.Version != 2 {
						t.Errorf("updated user %+v", u)
					}
				}},
			{Name: "stale version", Request: put(id, map[string]any{"fullName": "Lost Update", "isActive": true, "version": 1}), Status: 409, Code: "stale_version"},
			{Name: "roles, lock state and email in the body are ignored",
				Request: put(id, map[string]any{"fullName": "Renamed User", "isActive": true, "roles": []string{"Admin"}, "isLocked": true,
					"lockoutEnd": "2030-01-01T00:00:00Z", "email": "evil@example.com", "id": uuid.NewString()}), Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var u userDTO
					r.JSON(t, &u)
					if u.ID != id || u.Email != email || u.IsLocked || u.LockoutEnd != nil || !slices.Equal(u.Roles, []string{"Drafter"}) {
						t.Errorf("user %+v took server-owned properties from the body", u)
					}
				}},
			{Name: "renaming keeps the user's sign-in", Request: testkit.Request{Method: "GET", Path: "/api/auth/me", Token: token}, Status: 200},
			{Name: "disabling oneself", Request: put(admin.User.ID, map[string]any{"fullName": "Administrator", "isActive": false}),
				Status: 400, Code: "cannot_disable_self"},
			{Name: "renaming oneself", Request: put(admin.User.ID, map[string]any{"fullName": "The Administrator", "isActive": true}), Status: 200},
			{Name: "missing isActive", Request: put(id, map[string]any{"fullName": "X"}), Status: 400, Code: "validation_failed", Fields: []string{"IsActive"}},
			{Name: "blank full name", Request: put(id, map[string]any{"fullName": " ", "isActive": true}), Status: 400, Code: "validation_failed", Fields: []string{"FullName"}},
			{Name: "overlong full name", Request: put(id, map[string]any{"fullName": strings.Repeat("n", 201), "isActive": true}),
				Status: 400, Code: "validation_failed", Fields: []string{"FullName"}},
			{Name: "isActive of the wrong type", Request: put(id, map[string]any{"fullName": "X", "isActive": "no"}),
				Status: 400, Code: "validation_failed", Fields: []string{"IsActive"}},
			{Name: "unknown id comes before validation", Request: put(uuid.NewString(), map[string]any{}), Status: 404, Code: "not_found"},
			{Name: "not a UUID", Request: put("nope", map[string]any{"fullName": "X", "isActive": true}), Status: 404, Code: "not_found"},
			{Name: "disable", Request: put(id, map[string]any{"fullName": "Renamed User", "isActive": false}), Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var u userDTO
					r.JSON(t, &u)
					if u.IsActive {
						t.Errorf("user %+v still active", u)
					}
				}},
			{Name: "a disabled user's token is refused", Request: testkit.Request{Method: "GET", Path: "/api/auth/me", Token: token}, Status: 401, Code: "token_invalid"},
			{Name: "enable again", Request: put(id, map[string]any{"fullName": "Renamed User", "isActive": true}), Status: 200},
			{Name: "a token from before the disabling stays refused", Request: testkit.Request{Method: "GET", Path: "/api/auth/me", Token: token}, Status: 401, Code: "token_invalid"},
		})
		if u := getUser(t, app, admin.AccessToken, id); u.FullName != "Renamed User" || !u.IsActive {
			t.Errorf("user after the updates %+v", u)
		}
	})
}

// Of two updates sent with the same version exactly one wins.
func TestConcurrentUpdatesWithOneVersion(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		id, _, _ := identitytest.NewUser(t, app)
		const n = 4
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = app.Do(testkit.Request{Method: "PUT", Path: "/api/users/" + id, Token: admin,
					Body: map[string]any{"fullName": fmt.Sprintf("Writer %d", i), "isActive": true, "version": 1}}).Status
			}()
		}
		wg.Wait()
		won := 0
		for _, st := range statuses {
			switch st {
			case 200:
				won++
			case 409:
			default:
				t.Errorf("status %d, want 200 or 409", st)
			}
		}
		if won != 1 {
			t.Errorf("statuses %v: %d writers won, want exactly 1", statuses, won)
		}
		if u := getUser(t, app, admin, id); u.Version != 2 {
			t.Errorf("version %d after one successful update, want 2", u.Version)
		}
	})
}

func TestSetRoles(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
		id, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		s := signIn(t, app, email, identitytest.Password)
		put := func(token, id string, body any) testkit.Request {
			return testkit.Request{Method: "PUT", Path: "/api/users/" + id + "/roles", Token: token, Body: body}
		}

		app.Run(t, []testkit.Scenario{
			{Name: "unknown role", Request: put(admin.AccessToken, id, map[string]any{"roles": []string{"Drafter", "Pope"}}),
				Status: 400, Code: "validation_failed", Fields: []string{"Roles"}},
			{Name: "missing roles", Request: put(admin.AccessToken, id, map[string]any{}), Status: 400, Code: "validation_failed", Fields: []string{"Roles"}},
			{Name: "roles of the wrong type", Request: put(admin.AccessToken, id, map[string]any{"roles": "Drafter"}),
				Status: 400, Code: "validation_failed", Fields: []string{"Roles"}},
			{Name: "refused changes left the sign-in and the roles alone", Request: testkit.Request{Method: "GET", Path: "/api/auth/me", Token: s.AccessToken}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var u userDTO
					r.JSON(t, &u)
					if !slices.Equal(u.Roles, []string{"Drafter"}) {
						t.Errorf("roles %v, want [Drafter]", u.Roles)
					}
				}},
			{Name: "unknown user", Request: put(admin.AccessToken, uuid.NewString(), map[string]any{"roles": []string{}}), Status: 404, Code: "not_found"},
			{Name: "replace", Request: put(admin.AccessToken, id, map[string]any{"roles": []string{"HrAdmin", "Director"}}), Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var u userDTO
					r.JSON(t, &u)
					if !slices.Equal(u.Roles, []string{"Director", "HrAdmin"}) {
						t.Errorf("roles %v", u.Roles)
					}
				}},
			{Name: "the user's access token is revoked", Request: testkit.Request{Method: "GET", Path: "/api/auth/me", Token: s.AccessToken}, Status: 401, Code: "token_invalid"},
			{Name: "and the refresh token", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: map[string]string{"refreshToken": s.RefreshToken}},
				Status: 401, Code: "token_invalid"},
			{Name: "removing Admin from oneself", Request: put(admin.AccessToken, admin.User.ID, map[string]any{"roles": []string{"Drafter"}}),
				Status: 400, Code: "cannot_remove_own_admin"},
			{Name: "removing every role from oneself", Request: put(admin.AccessToken, admin.User.ID, map[string]any{"roles": []string{}}),
				Status: 400, Code: "cannot_remove_own_admin"},
			{Name: "clear", Request: put(admin.AccessToken, id, map[string]any{"roles": []string{}}), Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var u userDTO
					r.JSON(t, &u)
					if u.Roles == nil || len(u.Roles) != 0 {
						t.Errorf("roles %#v, want []", u.Roles)
					}
				}},
		})
		if u := getUser(t, app, admin.AccessToken, admin.User.ID); !slices.Equal(u.Roles, []string{"Admin"}) {
			t.Errorf("administrator roles %v after the refused changes", u.Roles)
		}

		// The new roles are what the user's next sign-in carries and is checked against.
		expect(t, app.Do(put(admin.AccessToken, id, map[string]any{"roles": []string{"HrAdmin"}})), 200, "")
		again := signIn(t, app, email, identitytest.Password)
		if !slices.Equal(again.User.Roles, []string{"HrAdmin"}) {
			t.Errorf("roles at sign-in %v", again.User.Roles)
		}
		expect(t, get(app, "/api/users", again.AccessToken), 200, "")

		// Another administrator may take Admin away from the first one.
		otherID, otherEmail, _ := identitytest.NewUser(t, app, identity.RoleAdmin)
		other := signIn(t, app, otherEmail, identitytest.Password)
		expect(t, app.Do(put(other.AccessToken, admin.User.ID, map[string]any{"roles": []string{"Drafter"}})), 200, "")
		expect(t, get(app, "/api/users", admin.AccessToken), 401, "token_invalid")
		// Keeping Admin while changing one's other roles is fine.
		expect(t, app.Do(put(other.AccessToken, otherID, map[string]any{"roles": []string{"Admin", "Drafter"}})), 200, "")
	})
}

func TestResetPassword(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		id, email, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		s := signIn(t, app, email, identitytest.Password)
		reset := func(id string, body any) testkit.Request {
			return testkit.Request{Method: "POST", Path: "/api/users/" + id + "/reset-password", Token: admin, Body: body}
		}
		app.Run(t, []testkit.Scenario{
			{Name: "too short", Request: reset(id, map[string]string{"newPassword": "Seven-7"}), Status: 400, Code: "validation_failed", Fields: []string{"NewPassword"}},
			{Name: "too long", Request: reset(id, map[string]string{"newPassword": strings.Repeat("x", 129)}), Status: 400, Code: "validation_failed", Fields: []string{"NewPassword"}},
			{Name: "missing", Request: reset(id, map[string]string{}), Status: 400, Code: "validation_failed", Fields: []string{"NewPassword"}},
			{Name: "unknown user", Request: reset(uuid.NewString(), map[string]string{"newPassword": "Reset-Password-1"}), Status: 404, Code: "not_found"},
			{Name: "refusals changed nothing", Request: testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: map[string]string{"refreshToken": s.RefreshToken}},
				Status: 200},
		})
		for range 5 {
			expect(t, login(app, email, "Wrong-Password-123"), 400, "invalid_credentials")
		}
		expect(t, app.Do(reset(id, map[string]string{"newPassword": "Reset-Password-1"})), 204, "")
		if u := getUser(t, app, admin, id); u.IsLocked {
			t.Error("still locked after the reset")
		}
		expect(t, login(app, email, identitytest.Password), 400, "invalid_credentials")
		expect(t, get(app, "/api/auth/me", s.AccessToken), 401, "token_invalid")
		expect(t, login(app, email, "Reset-Password-1"), 200, "")
	})
}

// Every Users endpoint needs a token, then its policy; HrAdmin holds
// Users.Read only.
func TestUsersEndpointsNeedTheirPolicy(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		id, _, _ := identitytest.NewUser(t, app, identity.RoleDrafter)
		drafter := identitytest.Token(t, app, identity.RoleDrafter)
		hr := identitytest.Token(t, app, identity.RoleHrAdmin)
		before := countRows(t, app, "users")

		endpoints := []struct {
			method, path string
			body         any
			hrAllowed    bool
		}{
			{"GET", "/api/users", nil, true},
			{"GET", "/api/users/" + id, nil, true},
			{"POST", "/api/users", map[string]any{"email": "new@example.com", "fullName": "New", "password": identitytest.Password, "roles": []string{"Admin"}}, false},
			{"PUT", "/api/users/" + id, map[string]any{"fullName": "X", "isActive": false}, false},
			{"PUT", "/api/users/" + id + "/roles", map[string]any{"roles": []string{"Admin"}}, false},
			{"POST", "/api/users/" + id + "/reset-password", map[string]any{"newPassword": "Hijacked-Password-1"}, false},
			{"POST", "/api/users/" + id + "/unlock", nil, false},
		}
		var scenarios []testkit.Scenario
		for _, e := range endpoints {
			req := func(token string) testkit.Request {
				return testkit.Request{Method: e.method, Path: e.path, Token: token, Body: e.body}
			}
			hrStatus, hrCode := 403, "forbidden"
			if e.hrAllowed {
				hrStatus, hrCode = 200, ""
			}
			scenarios = append(scenarios,
				testkit.Scenario{Name: e.method + " " + e.path + " without a token", Request: req(""), Status: 401, Code: "token_invalid",
					Check: func(t *testing.T, r *testkit.Response) {
						if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
							t.Errorf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
						}
					}},
				testkit.Scenario{Name: e.method + " " + e.path + " as Drafter", Request: req(drafter), Status: 403, Code: "forbidden"},
				testkit.Scenario{Name: e.method + " " + e.path + " as HrAdmin", Request: req(hr), Status: hrStatus, Code: hrCode},
			)
		}
		app.Run(t, scenarios)
		if n := countRows(t, app, "users"); n != before {
			t.Errorf("refused requests wrote users: %d, want %d", n, before)
		}
		u := getUser(t, app, admin, id)
		if !u.IsActive || !slices.Equal(u.Roles, []string{"Drafter"}) || u.Version != 1 {
			t.Errorf("refused requests changed the user: %+v", u)
		}
	})
}

func TestRequiredPasswordLengthFromConfig(t *testing.T) {
	t.Parallel()
	app := start(t, "sqlite", testkit.WithConfig("identity.password.requiredLength", 10))
	admin := identitytest.AdminToken(t, app)
	create := func(email, password string) testkit.Request {
		return testkit.Request{Method: "POST", Path: "/api/users", Token: admin,
			Body: map[string]any{"email": email, "fullName": "L", "password": password}}
	}
	app.Run(t, []testkit.Scenario{
		{Name: "nine characters", Request: create("l1@example.com", "Nine-Char"), Status: 400, Code: "validation_failed", Fields: []string{"Password"}},
		{Name: "ten characters", Request: create("l2@example.com", "Ten-Chars!"), Status: 201},
	})
}

// Users.Update or Users.Create granted to another role must not become a
// path to the Admin role.
func TestNonAdminsCannotEscalateToAdmin(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := identitytest.Start(t, driver)
		admin := identitytest.AdminToken(t, app)
		grant := map[string]any{"role": "HrAdmin", "menuKey": "Users", "canRead": true, "canCreate": true, "canUpdate": true, "canDelete": false}
		if r := app.Do(testkit.Request{Method: "PUT", Path: "/api/permissions", Token: admin, Body: grant}); r.Status != 200 {
			t.Fatalf("grant: %d %s", r.Status, r.Body)
		}
		hrID, _, hr := identitytest.NewUser(t, app, "HrAdmin")
		adminID := adminUserID(t, app, admin)
		drafterID, _, _ := identitytest.NewUser(t, app, "Drafter")
		app.Run(t, []testkit.Scenario{
			{Name: "create an Admin", Request: testkit.Request{Method: "POST", Path: "/api/users", Token: hr,
				Body: map[string]any{"email": "x@test.local", "fullName": "X", "password": identitytest.Password, "roles": []string{"Admin"}}},
				Status: 403, Code: "forbidden"},
			{Name: "grant oneself Admin", Request: testkit.Request{Method: "PUT", Path: "/api/users/" + hrID + "/roles", Token: hr,
				Body: map[string]any{"roles": []string{"HrAdmin", "Admin"}}}, Status: 403, Code: "forbidden"},
			{Name: "reset the administrator's password", Request: testkit.Request{Method: "POST", Path: "/api/users/" + adminID + "/reset-password", Token: hr,
				Body: map[string]any{"newPassword": "a-new-password-1"}}, Status: 403, Code: "forbidden"},
			{Name: "disable the administrator", Request: testkit.Request{Method: "PUT", Path: "/api/users/" + adminID, Token: hr,
				Body: map[string]any{"fullName": "A", "isActive": false}}, Status: 403, Code: "forbidden"},
			{Name: "unlock the administrator", Request: testkit.Request{Method: "POST", Path: "/api/users/" + adminID + "/unlock", Token: hr},
				Status: 403, Code: "forbidden"},
			{Name: "managing ordinary users still works", Request: testkit.Request{Method: "PUT", Path: "/api/users/" + drafterID + "/roles", Token: hr,
				Body: map[string]any{"roles": []string{"Drafter", "DeptManager"}}}, Status: 200},
		})
	})
}

func adminUserID(t *testing.T, app *testkit.App, token string) string {
	t.Helper()
	var me struct{ ID string }
	app.Do(testkit.Request{Method: "GET", Path: "/api/auth/me", Token: token}).JSON(t, &me)
	return me.ID
}
