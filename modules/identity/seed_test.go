package identity_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

func TestSeededRolesAdminAndMenus(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)

		t.Run("the administrator exists with the Admin role", func(t *testing.T) {
			if got := admin.User.Roles; len(got) != 1 || got[0] != identity.RoleAdmin {
				t.Errorf("administrator roles %v, want [Admin]", got)
			}
			if admin.User.Email != identitytest.AdminEmail || !admin.User.IsActive || admin.User.IsLocked {
				t.Errorf("administrator %+v", admin.User)
			}
		})

		t.Run("twelve roles with their codes", func(t *testing.T) {
			r := get(app, "/api/roles", admin.AccessToken)
			expect(t, r, 200, "")
			var roles []struct {
				ID, Name, Description string
				Code                  *string
			}
			r.JSON(t, &roles)
			var names []string
			codes := map[string]string{}
			for _, role := range roles {
				names = append(names, role.Name)
				if role.Code != nil {
					codes[role.Name] = *role.Code
				}
				if role.Description == "" {
					t.Errorf("role %s has no description", role.Name)
				}
			}
			mustEqualSet(t, "role names", names, allRoles)
			want := map[string]string{"Procurement": "PRO", "CostControl": "CCM", "Finance": "FIN", "Accounting": "ACT", "Equipment": "EQU"}
			if len(codes) != len(want) {
				t.Errorf("roles with codes %v, want %v", codes, want)
			}
			for name, code := range want {
				if codes[name] != code {
					t.Errorf("role %s has code %q, want %q", name, codes[name], code)
				}
			}
		})

		t.Run("any signed-in user may list roles, nobody else", func(t *testing.T) {
			expect(t, get(app, "/api/roles", identitytest.Token(t, app, identity.RoleDrafter)), 200, "")
			expect(t, get(app, "/api/roles", ""), 401, "token_invalid")
		})

		t.Run("twelve menu entries as a tree", func(t *testing.T) {
			r := get(app, "/api/menus", admin.AccessToken)
			expect(t, r, 200, "")
			var tree []menuNode
			r.JSON(t, &tree)
			mustEqualSet(t, "menu keys", flatten(tree), allMenuKeys)
			parents := map[string]string{}
			var walk func(parent string, nodes []menuNode)
			walk = func(parent string, nodes []menuNode) {
				for _, n := range nodes {
					parents[n.Key] = parent
					if n.Permissions != (flags{true, true, true, true}) {
						t.Errorf("menu %s shows %s, want every flag (the whole tree)", n.Key, fmtFlags(n.Permissions))
					}
					if n.Children == nil {
						t.Errorf("menu %s: children is null, want an array", n.Key)
					}
					walk(n.Key, n.Children)
				}
			}
			walk("", tree)
			if parents["Forms"] != "Contracts" || parents["Permissions"] != "Users" {
				t.Errorf("Forms under %q and Permissions under %q, want Contracts and Users", parents["Forms"], parents["Permissions"])
			}
			for _, k := range []string{"Dashboard", "Contracts", "Users", "Workflows"} {
				if parents[k] != "" {
					t.Errorf("menu %s is under %s, want a root", k, parents[k])
				}
			}
		})

		t.Run("Admin holds every flag and the other roles hold DESIGN's table", func(t *testing.T) {
			for _, role := range allRoles {
				r := get(app, "/api/permissions?role="+role, admin.AccessToken)
				expect(t, r, 200, "")
				var rows []permissionRow
				r.JSON(t, &rows)
				var keys []string
				for _, row := range rows {
					keys = append(keys, row.MenuKey)
					if row.Role != role {
						t.Errorf("asked for %s, got a row of %s", role, row.Role)
					}
					if want := designFlags(role, row.MenuKey); row.flags() != want {
						t.Errorf("%s on %s: %s, want %s", role, row.MenuKey, fmtFlags(row.flags()), fmtFlags(want))
					}
				}
				mustEqualSet(t, role+" menu keys", keys, allMenuKeys)
			}
			r := get(app, "/api/permissions", admin.AccessToken)
			expect(t, r, 200, "")
			var all []permissionRow
			r.JSON(t, &all)
			if len(all) != 12*12 {
				t.Errorf("%d permission rows for all roles, want 144", len(all))
			}
		})

		t.Run("a Drafter's menu is exactly the keys the table lets Drafter read", func(t *testing.T) {
			r := get(app, "/api/menus/me", identitytest.Token(t, app, identity.RoleDrafter))
			expect(t, r, 200, "")
			var tree []menuNode
			r.JSON(t, &tree)
			var want []string
			for key, letters := range designTable["Drafter"] {
				if strings.Contains(letters, "R") {
					want = append(want, key)
				}
			}
			mustEqualSet(t, "Drafter's menu", flatten(tree), want)
			for _, n := range tree {
				if n.Permissions != designFlags("Drafter", n.Key) {
					t.Errorf("menu %s shows %s, want %s", n.Key, fmtFlags(n.Permissions), fmtFlags(designFlags("Drafter", n.Key)))
				}
				if n.Key == "Contracts" && (len(n.Children) != 1 || n.Children[0].Key != "Forms") {
					t.Errorf("Contracts children %v, want [Forms]", flatten(n.Children))
				}
			}
		})

		t.Run("a menu shows a parent the caller cannot read when a child is readable", func(t *testing.T) {
			// HrAdmin reads Users but not Permissions: Users without children.
			r := get(app, "/api/menus/me", identitytest.Token(t, app, identity.RoleHrAdmin))
			expect(t, r, 200, "")
			var tree []menuNode
			r.JSON(t, &tree)
			mustEqualSet(t, "HrAdmin's menu", flatten(tree), []string{"Dashboard", "Contracts", "Departments", "Users"})

			// AuthorizedSigner reads Permissions (a child of Users) but not Users.
			savePermission(t, app, admin.AccessToken, identity.RoleAuthorizedSigner, "Permissions", flags{Read: true})
			r = get(app, "/api/menus/me", identitytest.Token(t, app, identity.RoleAuthorizedSigner))
			expect(t, r, 200, "")
			tree = nil
			r.JSON(t, &tree)
			mustEqualSet(t, "AuthorizedSigner's menu", flatten(tree), []string{"Dashboard", "Contracts", "Reports", "Users", "Permissions"})
			for _, n := range tree {
				if n.Key == "Users" && (n.Permissions.Read || len(n.Children) != 1 || !n.Children[0].Permissions.Read) {
					t.Errorf("Users entry %+v, want unreadable with the readable Permissions child", n)
				}
			}

			// A user without roles sees no menu at all.
			r = get(app, "/api/menus/me", identitytest.Token(t, app))
			expect(t, r, 200, "")
			if strings.TrimSpace(string(r.Body)) != "[]" {
				t.Errorf("menu of a user without roles: %s, want []", r.Body)
			}
		})
	})
}

func TestSeedIsIdempotentAndKeepsEdits(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		admin := identitytest.AdminToken(t, app)
		edited := flags{Read: true, Update: true}
		savePermission(t, app, admin, identity.RoleDrafter, "Budgets", edited)
		savePermission(t, app, admin, identity.RoleHrAdmin, "Users", flags{})

		tables := []string{"roles", "users", "user_roles", "menu_items", "permissions"}
		before := map[string]int64{}
		for _, tb := range tables {
			before[tb] = countRows(t, app, tb)
		}
		if before["roles"] != 12 || before["menu_items"] != 12 || before["permissions"] != 144 || before["users"] != 1 {
			t.Fatalf("after the first seed: %v", before)
		}
		for range 2 {
			if err := app.Kernel.Seed(context.Background()); err != nil {
				t.Fatalf("seed again: %v", err)
			}
		}
		for _, tb := range tables {
			if n := countRows(t, app, tb); n != before[tb] {
				t.Errorf("table %s has %d rows after seeding again, want %d", tb, n, before[tb])
			}
		}
		r := get(app, "/api/permissions?role=Drafter", admin)
		expect(t, r, 200, "")
		var rows []permissionRow
		r.JSON(t, &rows)
		for _, row := range rows {
			if row.MenuKey == "Budgets" && row.flags() != edited {
				t.Errorf("seeding again reset the administrator's edit of Drafter on Budgets: %s", fmtFlags(row.flags()))
			}
		}
		// The reloaded enforcer still applies the edit: HrAdmin lost Users.Read.
		expect(t, get(app, "/api/users", identitytest.Token(t, app, identity.RoleHrAdmin)), 403, "forbidden")
		// The administrator's password is not reset by a second seed.
		if r := login(app, identitytest.AdminEmail, identitytest.AdminPassword); r.Status != 200 {
			t.Errorf("administrator login after seeding again: %d", r.Status)
		}
	})
}

// syncBuffer collects log output written from the kernel's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startLogged serves a kernel on the database settings in set and returns
// what it logged until it stopped. onLog, when not nil, is waited for (up to
// a second after the service listens, DESIGN §2) before the kernel stops;
// stopping waits for the background checks, so the log is then complete.
func startLogged(t *testing.T, set map[string]any, onLog string) string {
	t.Helper()
	var logs syncBuffer
	settings := map[string]any{
		"identity.password.hash.memoryKiB":  64,
		"identity.password.hash.iterations": 1,
		"log.dir":                           "",
		"seed.demo":                         false,
		"http.address":                      "127.0.0.1:0",
	}
	for k, v := range set {
		settings[k] = v
	}
	k, err := kernel.New(kernel.Options{Set: settings, Environ: []string{}, LogOutput: &logs,
		Modules: []kernel.Factory{func() kernel.Module { return identity.New() }}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- k.Serve(ctx) }()
	select {
	case <-k.Listening():
	case err := <-served:
		t.Fatalf("serve: %v\n%s", err, logs.String())
	}
	if onLog != "" {
		deadline := time.Now().Add(time.Second)
		for !strings.Contains(logs.String(), onLog) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	return logs.String()
}

func TestStartupWarnsWhileAdminHasDefaultPassword(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		const warning = "the administrator still has the default password"
		set := testkit.FreshDatabase(t, driver)

		logs := startLogged(t, set, warning)
		if !strings.Contains(logs, warning) || !strings.Contains(logs, "level=ERROR") {
			t.Fatalf("first start logged no warning about the default password within a second of listening:\n%s", logs)
		}

		// Change the administrator's password through the API on the same database.
		app := start(t, driver, testkit.WithConfig("database.driver", set["database.driver"]), testkit.WithConfig("database.dsn", set["database.dsn"]))
		r := app.Do(testkit.Request{Method: "POST", Path: "/api/auth/change-password", Token: identitytest.AdminToken(t, app),
			Body: map[string]string{"currentPassword": identitytest.AdminPassword, "newPassword": "A-Much-Better-Secret-1", "confirmNewPassword": "A-Much-Better-Secret-1"}})
		expect(t, r, 204, "")

		if logs := startLogged(t, set, ""); strings.Contains(logs, warning) {
			t.Errorf("start after the password change still warns:\n%s", logs)
		}
		// A fresh database seeded with a password of the operator's choosing does not warn either.
		other := testkit.FreshDatabase(t, driver)
		other["seed.adminPassword"] = "Operator-Chosen-2026"
		if logs := startLogged(t, other, ""); strings.Contains(logs, warning) {
			t.Errorf("start with a configured admin password warns:\n%s", logs)
		}
	})
}

// An invalid identity setting stops the start with the key's name.
func TestInvalidConfigurationStopsTheStart(t *testing.T) {
	t.Parallel()
	for key, value := range map[string]any{
		"identity.lockout.maxFailedAttempts": 0,
		"identity.lockout.minutes":           -1,
		"identity.password.requiredLength":   129,
		"identity.password.hash.memoryKiB":   4,
		"identity.cacheSyncInterval":         "-1s",
		"identity.hashConcurrency":           -1,
		"identity.hashIsolation":             "thread",
	} {
		t.Run(key, func(t *testing.T) {
			set := testkit.FreshDatabase(t, "sqlite")
			set[key] = value
			k, err := kernel.New(kernel.Options{Set: set, Environ: []string{}, LogOutput: io.Discard,
				Modules: []kernel.Factory{func() kernel.Module { return identity.New() }}})
			if err == nil {
				defer k.Close(context.Background())
				err = k.Start(context.Background())
			}
			// The hash parameters are checked together and named as one key.
			if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(key, ".memoryKiB")) {
				t.Errorf("start error %v, want one naming %s", err, key)
			}
		})
	}
}

// A disabled module's menu keys disappear from the menus, the matrix and
// the caller's permissions, while their rows stay in the database for when
// the module is switched back on.
func TestDisabledModuleKeysAreHidden(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		set := testkit.FreshDatabase(t, driver)
		shared := []testkit.Option{
			testkit.WithConfig("database.driver", set["database.driver"]),
			testkit.WithConfig("database.dsn", set["database.dsn"]),
		}
		// The first start seeds all twelve keys.
		if n := countRows(t, start(t, driver, shared...), "permissions"); n != 12*12 {
			t.Fatalf("%d permission rows after the first start, want 144", n)
		}

		app := start(t, driver, append(shared, testkit.WithConfig("modules.testmenus.enabled", false))...)
		admin := identitytest.AdminToken(t, app)
		own := []string{"Users", "Permissions"}

		r := get(app, "/api/menus", admin)
		expect(t, r, 200, "")
		var tree []menuNode
		r.JSON(t, &tree)
		mustEqualSet(t, "/api/menus", flatten(tree), own)

		r = get(app, "/api/menus/me", identitytest.Token(t, app, identity.RoleHrAdmin))
		expect(t, r, 200, "")
		tree = nil
		r.JSON(t, &tree)
		mustEqualSet(t, "HrAdmin's /api/menus/me", flatten(tree), []string{"Users"})

		r = get(app, "/api/permissions", admin)
		expect(t, r, 200, "")
		var rows []permissionRow
		r.JSON(t, &rows)
		keys := map[string]int{}
		for _, row := range rows {
			keys[row.MenuKey]++
		}
		mustEqualSet(t, "/api/permissions keys", sortedKeys(keys), own)
		if len(rows) != 12*len(own) {
			t.Errorf("%d rows, want one per role and key of the enabled modules (%d)", len(rows), 12*len(own))
		}

		r = get(app, "/api/auth/me", identitytest.Token(t, app, identity.RoleDrafter))
		expect(t, r, 200, "")
		var me struct {
			Permissions map[string]flags `json:"permissions"`
		}
		r.JSON(t, &me)
		mustEqualSet(t, "/api/auth/me permission keys", sortedKeys(me.Permissions), own)

		r = app.Do(testkit.Request{Method: "PUT", Path: "/api/permissions", Token: admin,
			Body: map[string]any{"role": "Drafter", "menuKey": "Contracts", "canRead": true, "canCreate": false, "canUpdate": false, "canDelete": false}})
		expect(t, r, 400, "validation_failed")

		if n := countRows(t, app, "permissions"); n != 12*12 {
			t.Errorf("%d permission rows with the module off, want the 144 kept", n)
		}
	})
}

// gadgetsModule declares one menu key with the grants given.
type gadgetsModule struct{ grants kernel.Grants }

func (gadgetsModule) Info() kernel.Info { return kernel.Info{Name: "gadgets"} }

func (m gadgetsModule) Menus() []kernel.Menu {
	return []kernel.Menu{{Key: "Gadgets", Title: "Gadgets", Path: "/gadgets", Grants: m.grants}}
}

// Identity seeds exactly what a module declares, and refuses at start-up a
// declaration it could not honour, naming the key.
func TestDeclaredGrants(t *testing.T) {
	t.Parallel()
	startWith := func(t *testing.T, grants kernel.Grants) (*kernel.Kernel, error) {
		set := testkit.Isolated(t, "sqlite")
		set["identity.password.hash.memoryKiB"] = 64
		set["identity.password.hash.iterations"] = 1
		k, err := kernel.New(kernel.Options{Set: set, Environ: []string{}, LogOutput: io.Discard, Modules: []kernel.Factory{
			func() kernel.Module { return identity.New() },
			func() kernel.Module { return gadgetsModule{grants: grants} },
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Close(context.Background()) })
		return k, k.Start(context.Background())
	}

	t.Run("seeded as declared", func(t *testing.T) {
		k, err := startWith(t, kernel.Grants{"Finance": "UR", "HrAdmin": "D"})
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			RoleName                                 string
			CanRead, CanCreate, CanUpdate, CanDelete bool
		}
		var rows []row
		err = k.App().DB.Conn(context.Background()).Raw(`SELECT r.name AS role_name, p.can_read, p.can_create, p.can_update, p.can_delete
			FROM permissions p JOIN roles r ON r.id = p.role_id WHERE p.menu_key = 'Gadgets'`).Scan(&rows).Error
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 12 {
			t.Errorf("%d rows for Gadgets, want one per role", len(rows))
		}
		for _, r := range rows {
			want := flags{}
			switch r.RoleName {
			case "Admin":
				want = flags{true, true, true, true}
			case "Finance":
				want = flags{Read: true, Update: true}
			case "HrAdmin":
				want = flags{Delete: true}
			}
			if got := (flags{r.CanRead, r.CanCreate, r.CanUpdate, r.CanDelete}); got != want {
				t.Errorf("%s on Gadgets: %s, want %s", r.RoleName, fmtFlags(got), fmtFlags(want))
			}
		}
	})

	for _, tc := range []struct {
		name   string
		grants kernel.Grants
		want   []string
	}{
		{"unknown role", kernel.Grants{"Drafer": "R"}, []string{"Gadgets", `"Drafer"`, "unknown role"}},
		{"Admin", kernel.Grants{"Admin": "R"}, []string{"Gadgets", "Admin", "every policy"}},
		{"unknown letter", kernel.Grants{"Finance": "RW"}, []string{"Gadgets", "Finance", `'W'`}},
		{"letter twice", kernel.Grants{"Finance": "RR"}, []string{"Gadgets", "Finance", "twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := startWith(t, tc.grants)
			if err == nil {
				t.Fatal("started; want an error")
			}
			for _, w := range append(tc.want, "identity") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
}
