package identity_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// Other modules learn about users through identity.Directory.
func TestDirectory(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		dir, err := kernel.Need[identity.Directory](app.Kernel.App())
		if err != nil {
			t.Fatal(err)
		}
		admin := identitytest.AdminToken(t, app)
		drafter := createUser(t, app, admin, "drafter@example.com", "Dana Drafter", identity.RoleDrafter)
		both := createUser(t, app, admin, "both@example.com", "Bo Both", identity.RoleDrafter, identity.RoleDirector)
		gone := createUser(t, app, admin, "gone@example.com", "Gus Gone", identity.RoleDirector)
		setActive(t, app, admin, gone, false)

		names, err := dir.Names(t.Context(), []string{drafter, both, uuid.NewString()})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{drafter: "Dana Drafter", both: "Bo Both"}; !maps.Equal(names, want) {
			t.Errorf("names %v, want %v", names, want)
		}
		if names, err := dir.Names(t.Context(), nil); err != nil || len(names) != 0 {
			t.Errorf("names of no ids: %v, %v", names, err)
		}

		ids, err := dir.UserIDsInRoles(t.Context(), []string{identity.RoleDrafter, identity.RoleDirector})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{drafter, both}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Errorf("active users in Drafter or Director: %v, want %v (sorted, each once, the disabled one left out)", ids, want)
		}
		if ids, err := dir.UserIDsInRoles(t.Context(), nil); err != nil || len(ids) != 0 {
			t.Errorf("users in no roles: %v, %v", ids, err)
		}
	})
}

// Long-lived connections learn through identity.Sessions that a sign-in
// ended: a disabled user drops out, a role change gives a new stamp.
func TestSessions(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		sessions, err := kernel.Need[identity.Sessions](app.Kernel.App())
		if err != nil {
			t.Fatal(err)
		}
		admin := identitytest.AdminToken(t, app)
		kept := createUser(t, app, admin, "kept@example.com", "Kim Kept", identity.RoleDrafter)
		moved := createUser(t, app, admin, "moved@example.com", "Mo Moved", identity.RoleDrafter)
		gone := createUser(t, app, admin, "gone@example.com", "Gus Gone", identity.RoleDrafter)
		before, err := sessions.ActiveStamps(t.Context(), []string{kept, moved, gone, uuid.NewString()})
		if err != nil {
			t.Fatal(err)
		}
		if len(before) != 3 || before[kept] == "" {
			t.Fatalf("stamps of three active users and an unknown id: %v", before)
		}
		setActive(t, app, admin, gone, false)
		r := app.Do(testkit.Request{Method: "PUT", Path: "/api/users/" + moved + "/roles", Token: admin,
			Body: map[string]any{"roles": []string{identity.RoleDirector}}})
		expect(t, r, 200, "")
		after, err := sessions.ActiveStamps(t.Context(), []string{kept, moved, gone})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := after[gone]; ok || after[kept] != before[kept] || after[moved] == before[moved] || after[moved] == "" {
			t.Errorf("after disabling one and changing the roles of another: %v (before %v)", after, before)
		}
		if sessions.SyncInterval() != 0 {
			t.Errorf("sync interval %v, want the tests' 0s", sessions.SyncInterval())
		}
	})
}

// Names and role holders come from memory, and every change that affects
// them is seen by the next read: a rename, a new user, a disabled user, a
// role change.
func TestDirectoryCachesSeeChanges(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := start(t, driver)
		dir, err := kernel.Need[identity.Directory](app.Kernel.App())
		if err != nil {
			t.Fatal(err)
		}
		admin := identitytest.AdminToken(t, app)
		checkDirectorySeesChanges(t, app, app, dir, dir, admin, func(t *testing.T, what string, cond func() bool) {
			if !cond() {
				t.Errorf("%s: not seen by the next read", what)
			}
		})
	})
}

// A second node on the same Postgres database sees the changes made on the
// first within the cache bus's bound (docs/decisions.md), polled without
// sleeping longer than needed.
func TestDirectoryCachesAcrossNodes(t *testing.T) {
	t.Parallel()
	if len(testkit.Drivers()) < 2 {
		t.Skip("Postgres only: set " + testkit.PostgresDSNEnv)
	}
	dsn := testkit.FreshSchema(t)
	a := start(t, "postgres", testkit.WithConfig("database.dsn", dsn))
	b := start(t, "postgres", testkit.WithConfig("database.dsn", dsn))
	dirA, err := kernel.Need[identity.Directory](a.Kernel.App())
	if err != nil {
		t.Fatal(err)
	}
	dirB, err := kernel.Need[identity.Directory](b.Kernel.App())
	if err != nil {
		t.Fatal(err)
	}
	admin := identitytest.AdminToken(t, a)
	checkDirectorySeesChanges(t, a, b, dirA, dirB, admin, func(t *testing.T, what string, cond func() bool) {
		deadline := time.Now().Add(3 * time.Second) // the bound is 2 s with a silently dead listener; ms otherwise
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen by the other node within 3 s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// checkDirectorySeesChanges changes users on app a and checks, with seen,
// that dirB (of app b, maybe a itself) answers the change; each read is made
// first so that the cache holds the old answer.
func checkDirectorySeesChanges(t *testing.T, a, b *testkit.App, dirA, dirB identity.Directory, admin string, seen func(t *testing.T, what string, cond func() bool)) {
	ctx := t.Context()
	names := func(id string) string {
		n, err := dirB.Names(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		return n[id]
	}
	holders := func(role string) []string {
		ids, err := dirB.UserIDsInRoles(ctx, []string{role})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	_ = dirA
	u := createUser(t, a, admin, fmt.Sprintf("cache%d@example.com", time.Now().UnixNano()), "Cas Cache", identity.RoleFinance)
	if names(u) != "Cas Cache" {
		// The other node may not know the user yet only if it cached
		// nothing for it: names of unknown ids are not cached.
		seen(t, "a new user's name", func() bool { return names(u) == "Cas Cache" })
	}
	seen(t, "a new Finance user", func() bool { return slices.Contains(holders(identity.RoleFinance), u) })

	r := a.Do(testkit.Request{Method: "PUT", Path: "/api/users/" + u, Token: admin,
		Body: map[string]any{"fullName": "Cas Renamed", "isActive": true}})
	expect(t, r, 200, "")
	seen(t, "a rename", func() bool { return names(u) == "Cas Renamed" })

	r = a.Do(testkit.Request{Method: "PUT", Path: "/api/users/" + u + "/roles", Token: admin,
		Body: map[string]any{"roles": []string{identity.RoleDirector}}})
	expect(t, r, 200, "")
	seen(t, "a role change (left Finance)", func() bool { return !slices.Contains(holders(identity.RoleFinance), u) })
	seen(t, "a role change (joined Director)", func() bool { return slices.Contains(holders(identity.RoleDirector), u) })

	setActive(t, a, admin, u, false)
	seen(t, "a disabled user", func() bool { return !slices.Contains(holders(identity.RoleDirector), u) })
	setActive(t, a, admin, u, true)
	seen(t, "an enabled user", func() bool { return slices.Contains(holders(identity.RoleDirector), u) })
}
