// Package identitytest helps every module's black-box tests sign in: it
// starts an instance with cheap password hashing and hands out access
// tokens of the administrator or of fresh users holding given roles.
package identitytest

import (
	"fmt"
	"sync/atomic"
	"testing"

	_ "github.com/contractflow/contractflow/modules/identity" // the module under every test
	"github.com/contractflow/contractflow/platform/testkit"
)

// AdminEmail and AdminPassword are the seeded administrator's credentials.
const (
	AdminEmail    = "admin@contractflow.local"
	AdminPassword = "ChangeMe-Admin-2026"
	// Password is given to every user NewUser creates.
	Password = "Test-Password-2026"
)

// Start is testkit.Start with password hashing cheap enough for tests
// (the production parameters are measured in the identity benchmarks).
func Start(t testing.TB, driver string, opts ...testkit.Option) *testkit.App {
	t.Helper()
	fast := []testkit.Option{
		testkit.WithConfig("identity.password.hash.memoryKiB", 64),
		testkit.WithConfig("identity.password.hash.iterations", 1),
		testkit.WithConfig("identity.cacheSyncInterval", "0s"),
	}
	return testkit.Start(t, driver, append(fast, opts...)...)
}

// Login signs in and returns the access token, failing the test otherwise.
func Login(t testing.TB, app *testkit.App, email, password string) string {
	t.Helper()
	r := app.Do(testkit.Request{Method: "POST", Path: "/api/auth/login",
		Body: map[string]string{"email": email, "password": password}})
	if r.Status != 200 {
		t.Fatalf("login %s: status %d: %s", email, r.Status, r.Body)
	}
	var out struct{ AccessToken string }
	r.JSON(t, &out)
	return out.AccessToken
}

// AdminToken signs in as the seeded administrator.
func AdminToken(t testing.TB, app *testkit.App) string {
	t.Helper()
	return Login(t, app, AdminEmail, AdminPassword)
}

var seq atomic.Int64

// NewUser creates an active user holding roles and returns its id, email
// and access token.
func NewUser(t testing.TB, app *testkit.App, roles ...string) (id, email, token string) {
	t.Helper()
	if roles == nil {
		roles = []string{}
	}
	email = fmt.Sprintf("user%d@test.local", seq.Add(1))
	r := app.Do(testkit.Request{Method: "POST", Path: "/api/users", Token: AdminToken(t, app),
		Body: map[string]any{"email": email, "fullName": "Test " + email, "password": Password, "roles": roles}})
	if r.Status != 201 {
		t.Fatalf("create user with roles %v: status %d: %s", roles, r.Status, r.Body)
	}
	var out struct{ ID string }
	r.JSON(t, &out)
	return out.ID, email, Login(t, app, email, Password)
}

// Token returns the access token of a fresh user holding roles.
func Token(t testing.TB, app *testkit.App, roles ...string) string {
	t.Helper()
	_, _, token := NewUser(t, app, roles...)
	return token
}

// DesignGrants is DESIGN §2's default permission table for the roles other
// than Admin: role → menu key → letters of C, R, U, D. It is written out
// here, apart from the modules that declare the grants (kernel.Menu.Grants),
// so that a typo in either shows.
var DesignGrants = map[string]map[string]string{
	"Drafter": {"Dashboard": "R", "Contracts": "CRUD", "Forms": "R", "PurchaseEvaluations": "CRU",
		"Suppliers": "RC", "Projects": "R", "Departments": "R", "Reports": "R"},
	"DeptManager": {"Dashboard": "R", "Contracts": "CRUD", "Forms": "R", "PurchaseEvaluations": "RU",
		"Budgets": "R", "Suppliers": "R", "Projects": "R", "Departments": "R", "Reports": "R"},
	"ProjectManager": {"Dashboard": "R", "Contracts": "R", "PurchaseEvaluations": "RU", "Budgets": "CRU",
		"Suppliers": "R", "Projects": "RU", "Departments": "R", "Reports": "R"},
	"Procurement": {"Dashboard": "R", "Contracts": "R", "PurchaseEvaluations": "CRUD", "Suppliers": "CRU",
		"Projects": "R", "Departments": "R", "Reports": "R"},
	"CostControl": {"Dashboard": "R", "Contracts": "R", "PurchaseEvaluations": "RU", "Budgets": "CRU",
		"Suppliers": "R", "Projects": "R", "Reports": "R"},
	"Finance":    {"Dashboard": "R", "Contracts": "R", "PurchaseEvaluations": "RU", "Budgets": "R", "Reports": "R"},
	"Accounting": {"Dashboard": "R", "Contracts": "R", "PurchaseEvaluations": "RU", "Budgets": "R", "Reports": "R"},
	"Equipment":  {"Dashboard": "R", "Contracts": "R", "PurchaseEvaluations": "RU", "Suppliers": "R"},
	"Director": {"Dashboard": "R", "Contracts": "R", "PurchaseEvaluations": "RU", "Budgets": "RU",
		"Suppliers": "R", "Projects": "R", "Departments": "R", "Reports": "R"},
	"AuthorizedSigner": {"Dashboard": "R", "Contracts": "R", "Reports": "R"},
	"HrAdmin":          {"Dashboard": "R", "Contracts": "RU", "Departments": "CRU", "Users": "R"},
}

// DesignMenuKeys are the twelve menu keys of DESIGN §2.
var DesignMenuKeys = []string{"Dashboard", "Contracts", "Forms", "PurchaseEvaluations", "Budgets",
	"Reports", "Suppliers", "Projects", "Departments", "Users", "Permissions", "Workflows"}
