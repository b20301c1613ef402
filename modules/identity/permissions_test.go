package identity_test

import (
	"testing"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

func TestPermissionEndpoints(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		drafter := identitytest.Token(t, app, identity.RoleDrafter)
		hr := identitytest.Token(t, app, identity.RoleHrAdmin)
		put := func(token string, body any) testkit.Request {
			return testkit.Request{Method: "PUT", Path: "/api/permissions", Token: token, Body: body}
		}
		row := func(role, key string, r, c, u, d bool) map[string]any {
			return map[string]any{"role": role, "menuKey": key, "canRead": r, "canCreate": c, "canUpdate": u, "canDelete": d}
		}
		before := countRows(t, app, "permissions")

		app.Run(t, []testkit.Scenario{
			{Name: "menus need Permissions.Read", Request: testkit.Request{Method: "GET", Path: "/api/menus", Token: drafter}, Status: 403, Code: "forbidden"},
			{Name: "menus need a token", Request: testkit.Request{Method: "GET", Path: "/api/menus"}, Status: 401, Code: "token_invalid"},
			{Name: "permissions need Permissions.Read", Request: testkit.Request{Method: "GET", Path: "/api/permissions", Token: hr}, Status: 403, Code: "forbidden"},
			{Name: "rows of one role", Request: testkit.Request{Method: "GET", Path: "/api/permissions?role=Drafter", Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var rows []permissionRow
					r.JSON(t, &rows)
					if len(rows) != 12 {
						t.Errorf("%d rows, want 12", len(rows))
					}
					for _, row := range rows {
						if row.flags() != designFlags("Drafter", row.MenuKey) {
							t.Errorf("Drafter on %s: %s", row.MenuKey, fmtFlags(row.flags()))
						}
					}
				}},
			{Name: "unknown role", Request: testkit.Request{Method: "GET", Path: "/api/permissions?role=Pope", Token: admin},
				Status: 400, Code: "validation_failed", Fields: []string{"Role"}},
			{Name: "upsert needs Permissions.Update", Request: put(drafter, row("Drafter", "Users", true, false, false, false)), Status: 403, Code: "forbidden"},
			{Name: "lowering an Admin flag", Request: put(admin, row("Admin", "Contracts", true, true, true, false)), Status: 400, Code: "cannot_lower_admin"},
			{Name: "lowering Admin on its own keys", Request: put(admin, row("Admin", "Permissions", false, false, false, false)), Status: 400, Code: "cannot_lower_admin"},
			{Name: "Admin with every flag is a no-op", Request: put(admin, row("Admin", "Contracts", true, true, true, true)), Status: 200},
			{Name: "unknown menu key", Request: put(admin, row("Drafter", "Spaceships", true, false, false, false)),
				Status: 400, Code: "validation_failed", Fields: []string{"MenuKey"}},
			{Name: "unknown role in an upsert", Request: put(admin, row("Pope", "Contracts", true, false, false, false)),
				Status: 400, Code: "validation_failed", Fields: []string{"Role"}},
			{Name: "missing flags", Request: put(admin, map[string]any{"role": "Drafter", "menuKey": "Users"}),
				Status: 400, Code: "validation_failed", Fields: []string{"CanRead", "CanCreate", "CanUpdate", "CanDelete"}},
			{Name: "flag of the wrong type", Request: put(admin, map[string]any{"role": "Drafter", "menuKey": "Users", "canRead": "yes",
				"canCreate": false, "canUpdate": false, "canDelete": false}), Status: 400, Code: "validation_failed", Fields: []string{"CanRead"}},
			{Name: "refusals left the Admin rows whole", Request: testkit.Request{Method: "GET", Path: "/api/permissions?role=Admin", Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var rows []permissionRow
					r.JSON(t, &rows)
					for _, row := range rows {
						if row.flags() != (flags{true, true, true, true}) {
							t.Errorf("Admin on %s: %s", row.MenuKey, fmtFlags(row.flags()))
						}
					}
				}},
			{Name: "upsert answers the row", Request: put(admin, row("Equipment", "Budgets", true, false, true, false)), Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var got permissionRow
					r.JSON(t, &got)
					if got != (permissionRow{Role: "Equipment", MenuKey: "Budgets", CanRead: true, CanUpdate: true}) {
						t.Errorf("row %+v", got)
					}
				}},
			{Name: "and stores it", Request: testkit.Request{Method: "GET", Path: "/api/permissions?role=Equipment", Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var rows []permissionRow
					r.JSON(t, &rows)
					for _, row := range rows {
						if row.MenuKey == "Budgets" && row.flags() != (flags{Read: true, Update: true}) {
							t.Errorf("Equipment on Budgets: %s", fmtFlags(row.flags()))
						}
					}
				}},
		})
		if n := countRows(t, app, "permissions"); n != before {
			t.Errorf("%d permission rows, want %d (upserts update in place)", n, before)
		}
	})
}

// A change to the matrix applies to the very next request, without a restart.
// With a sync interval of an hour the node's own reload is all there is, so
// the test also runs that way.
func TestPermissionChangeAppliesAtOnce(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		for _, interval := range []string{"0s", "1h"} {
			t.Run("cacheSyncInterval "+interval, func(t *testing.T) {
				app := start(t, driver, testkit.WithConfig("identity.cacheSyncInterval", interval))
				admin := identitytest.AdminToken(t, app)
				drafter := identitytest.Token(t, app, identity.RoleDrafter)

				expect(t, get(app, "/api/users", drafter), 403, "forbidden")
				savePermission(t, app, admin, identity.RoleDrafter, "Users", flags{Read: true})
				expect(t, get(app, "/api/users", drafter), 200, "")
				savePermission(t, app, admin, identity.RoleDrafter, "Users", flags{})
				expect(t, get(app, "/api/users", drafter), 403, "forbidden")

				// Revoking a default grant works the same way.
				expect(t, get(app, "/api/test/contracts", drafter), 200, "")
				savePermission(t, app, admin, identity.RoleDrafter, "Contracts", flags{Create: true})
				expect(t, get(app, "/api/test/contracts", drafter), 403, "forbidden")
			})
		}
	})
}

// Two nodes share one database: a change made through node A is enforced by
// node B on its next request (identitytest runs with cacheSyncInterval 0).
func TestChangesReachEveryNode(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		set := testkit.FreshDatabase(t, driver)
		shared := []testkit.Option{
			testkit.WithConfig("database.driver", set["database.driver"]),
			testkit.WithConfig("database.dsn", set["database.dsn"]),
			testkit.WithClock(clock.NewManual(t0)),
		}
		a := start(t, driver, shared...)
		b := start(t, driver, shared...)
		admin := identitytest.AdminToken(t, a)
		id, _, drafter := identitytest.NewUser(t, a, identity.RoleDrafter)

		// Node B has cached the Drafter's state and decisions.
		expect(t, get(b, "/api/users", drafter), 403, "forbidden")
		expect(t, get(b, "/api/test/contracts", drafter), 200, "")

		savePermission(t, a, admin, identity.RoleDrafter, "Users", flags{Read: true})
		expect(t, get(b, "/api/users", drafter), 200, "")
		savePermission(t, a, admin, identity.RoleDrafter, "Users", flags{})
		expect(t, get(b, "/api/users", drafter), 403, "forbidden")

		setActive(t, a, admin, id, false)
		expect(t, get(b, "/api/test/contracts", drafter), 401, "token_invalid")

		// A role change (a new security stamp) on A revokes the token on B.
		id2, email2, _ := identitytest.NewUser(t, a, identity.RoleDrafter)
		s := signIn(t, b, email2, identitytest.Password)
		expect(t, get(b, "/api/test/contracts", s.AccessToken), 200, "")
		expect(t, a.Do(testkit.Request{Method: "PUT", Path: "/api/users/" + id2 + "/roles", Token: admin,
			Body: map[string]any{"roles": []string{"Director"}}}), 200, "")
		expect(t, get(b, "/api/test/contracts", s.AccessToken), 401, "token_invalid")
	})
}
