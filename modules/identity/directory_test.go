package identity_test

import (
	"maps"
	"slices"
	"testing"

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
		if slices.Sort(ids); !slices.Equal(ids, want) {
			t.Errorf("active users in Drafter or Director: %v, want %v (each once, the disabled one left out)", ids, want)
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
