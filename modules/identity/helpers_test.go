package identity_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// The identity module alone declares only the Users and Permissions menu
// keys; the other ten belong to other modules (two of them, procurement and
// budget, not built yet). menusModule stands in for them: it declares their
// keys with DESIGN §2's default grants, as each owner does, so the whole
// 12-key matrix exists, and serves one route per policy so tests can ask the
// guard about any of the 48.
type menusModule struct{}

var (
	_ kernel.MenuProvider    = menusModule{}
	_ kernel.RouteProvider   = menusModule{}
	_ kernel.OpenAPIProvider = menusModule{}
)

// otherMenuKeys are the ten menu keys of DESIGN §2 that are not identity's.
var otherMenuKeys = []string{"Dashboard", "Contracts", "Forms", "PurchaseEvaluations", "Budgets",
	"Reports", "Suppliers", "Projects", "Departments", "Workflows"}

// allMenuKeys are the twelve menu keys of DESIGN §2.
var allMenuKeys = append(slices.Clone(otherMenuKeys), "Users", "Permissions")

var actions = []string{"Read", "Create", "Update", "Delete"}

func (menusModule) Info() kernel.Info { return kernel.Info{Name: "testmenus"} }

func (menusModule) Menus() []kernel.Menu {
	out := make([]kernel.Menu, 0, len(otherMenuKeys))
	for i, k := range otherMenuKeys {
		m := kernel.Menu{Key: k, Title: k, Path: "/" + strings.ToLower(k), Order: 10 * (i + 1), Grants: designGrantsOf(k)}
		if k == "Forms" {
			m.ParentKey = "Contracts"
		}
		out = append(out, m)
	}
	return out
}

// Routes serves GET /api/test/contracts (Contracts.Read) and
// GET /api/test/policies/<menu>/<action> for each of the 48 policies.
func (menusModule) Routes(r *httpx.Routes) {
	ok := func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"ok": true}) }
	r.Get("/api/test/contracts", httpx.Require("Contracts.Read"), ok)
	for _, k := range allMenuKeys {
		for _, a := range actions {
			r.Get("/api/test/policies/"+k+"/"+a, httpx.Require(k+"."+a), ok)
		}
	}
}

func (menusModule) OpenAPI() []byte { return []byte(menusOpenAPI) }

const menusOpenAPI = `
paths:
  /api/test/contracts:
    get:
      operationId: testContracts
      responses:
        "200": {$ref: "#/components/responses/TestOK"}
        "403": {$ref: "#/components/responses/Forbidden"}
  /api/test/policies/{menu}/{action}:
    parameters:
      - {name: menu, in: path, required: true, schema: {type: string}}
      - {name: action, in: path, required: true, schema: {type: string}}
    get:
      operationId: testPolicy
      responses:
        "200": {$ref: "#/components/responses/TestOK"}
        "403": {$ref: "#/components/responses/Forbidden"}
components:
  responses:
    TestOK:
      description: Let through.
      content:
        application/json:
          schema:
            type: object
            required: [ok]
            properties:
              ok: {type: boolean}
`

// modules are the identity module and the stand-in for the others.
func modules() testkit.Option {
	return testkit.WithModules(
		func() kernel.Module { return identity.New() },
		func() kernel.Module { return menusModule{} },
	)
}

// t0 is the manual clock's start in tests that move time.
var t0 = time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)

// start runs an instance with the identity module and the stand-in menus on
// a manual clock stopped at t0.
func start(t testing.TB, driver string, opts ...testkit.Option) *testkit.App {
	t.Helper()
	base := []testkit.Option{modules(), testkit.WithClock(clock.NewManual(t0))}
	return identitytest.Start(t, driver, append(base, opts...)...)
}

// tokens is the body of login and refresh.
type tokens struct {
	AccessToken  string  `json:"accessToken"`
	RefreshToken string  `json:"refreshToken"`
	TokenType    string  `json:"tokenType"`
	ExpiresIn    int     `json:"expiresIn"`
	User         userDTO `json:"user"`
}

type userDTO struct {
	ID         string     `json:"id"`
	Email      string     `json:"email"`
	FullName   string     `json:"fullName"`
	IsActive   bool       `json:"isActive"`
	IsLocked   bool       `json:"isLocked"`
	LockoutEnd *time.Time `json:"lockoutEnd"`
	CreatedAt  time.Time  `json:"createdAt"`
	Roles      []string   `json:"roles"`
	Version    int        `json:"version"`
}

type flags struct {
	Read   bool `json:"read"`
	Create bool `json:"create"`
	Update bool `json:"update"`
	Delete bool `json:"delete"`
}

type menuNode struct {
	Key         string     `json:"key"`
	Title       string     `json:"title"`
	Path        string     `json:"path"`
	Order       int        `json:"order"`
	Permissions flags      `json:"permissions"`
	Children    []menuNode `json:"children"`
}

type permissionRow struct {
	Role      string `json:"role"`
	MenuKey   string `json:"menuKey"`
	CanRead   bool   `json:"canRead"`
	CanCreate bool   `json:"canCreate"`
	CanUpdate bool   `json:"canUpdate"`
	CanDelete bool   `json:"canDelete"`
}

func (p permissionRow) flags() flags { return flags{p.CanRead, p.CanCreate, p.CanUpdate, p.CanDelete} }

type page struct {
	Items      []userDTO `json:"items"`
	Page       int       `json:"page"`
	PageSize   int       `json:"pageSize"`
	TotalCount int       `json:"totalCount"`
	TotalPages int       `json:"totalPages"`
}

// designTable is DESIGN §2's default permission table (role → key → letters).
var designTable = identitytest.DesignGrants

// designGrantsOf is the column of designTable for one key, as its owner
// declares it.
func designGrantsOf(key string) kernel.Grants {
	g := kernel.Grants{}
	for role, keys := range designTable {
		if letters, ok := keys[key]; ok {
			g[role] = letters
		}
	}
	return g
}

// designFlags returns the default flags of role on menu key.
func designFlags(role, key string) flags {
	if role == identity.RoleAdmin {
		return flags{true, true, true, true}
	}
	l := designTable[role][key]
	return flags{strings.Contains(l, "R"), strings.Contains(l, "C"), strings.Contains(l, "U"), strings.Contains(l, "D")}
}

func (f flags) has(action string) bool {
	switch action {
	case "Read":
		return f.Read
	case "Create":
		return f.Create
	case "Update":
		return f.Update
	}
	return f.Delete
}

// allRoles are the twelve roles of DESIGN §2.
var allRoles = []string{"Admin", "Drafter", "DeptManager", "ProjectManager", "Procurement", "CostControl",
	"Finance", "Accounting", "Equipment", "Director", "AuthorizedSigner", "HrAdmin"}

// login posts credentials and returns the response.
func login(app *testkit.App, email, password string) *testkit.Response {
	return app.Do(testkit.Request{Method: "POST", Path: "/api/auth/login",
		Body: map[string]string{"email": email, "password": password}})
}

// signIn logs in and returns the tokens, failing the test otherwise.
func signIn(t testing.TB, app *testkit.App, email, password string) tokens {
	t.Helper()
	r := login(app, email, password)
	if r.Status != 200 {
		t.Fatalf("login %s: status %d: %s", email, r.Status, r.Body)
	}
	var out tokens
	r.JSON(t, &out)
	return out
}

func refresh(app *testkit.App, token string) *testkit.Response {
	return app.Do(testkit.Request{Method: "POST", Path: "/api/auth/refresh", Body: map[string]string{"refreshToken": token}})
}

// get sends a GET with token and returns the response.
func get(app *testkit.App, path, token string) *testkit.Response {
	return app.Do(testkit.Request{Method: "GET", Path: path, Token: token})
}

// expect fails the test unless r has status (and, when given, problem code).
func expect(t testing.TB, r *testkit.Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	if code != "" {
		if p := r.Problem(t); p.Code != code {
			t.Fatalf("problem code %q, want %q; body: %s", p.Code, code, r.Body)
		}
	}
}

// getUser reads a user through the API as the administrator.
func getUser(t testing.TB, app *testkit.App, admin, id string) userDTO {
	t.Helper()
	r := get(app, "/api/users/"+id, admin)
	expect(t, r, 200, "")
	var u userDTO
	r.JSON(t, &u)
	return u
}

// setActive enables or disables a user as the administrator.
func setActive(t testing.TB, app *testkit.App, admin, id string, active bool) {
	t.Helper()
	u := getUser(t, app, admin, id)
	r := app.Do(testkit.Request{Method: "PUT", Path: "/api/users/" + id, Token: admin,
		Body: map[string]any{"fullName": u.FullName, "isActive": active}})
	expect(t, r, 200, "")
}

// savePermission upserts one matrix row as the administrator.
func savePermission(t testing.TB, app *testkit.App, admin, role, key string, f flags) {
	t.Helper()
	r := app.Do(testkit.Request{Method: "PUT", Path: "/api/permissions", Token: admin,
		Body: map[string]any{"role": role, "menuKey": key, "canRead": f.Read, "canCreate": f.Create, "canUpdate": f.Update, "canDelete": f.Delete}})
	expect(t, r, 200, "")
}

// countRows counts the rows of an identity table straight from the
// database, to prove that refused requests wrote nothing.
func countRows(t testing.TB, app *testkit.App, table string) int64 {
	t.Helper()
	var n int64
	if err := app.Kernel.App().DB.Conn(context.Background()).Table(table).Count(&n).Error; err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// claimsOf decodes a JWT's payload without verifying it.
func claimsOf(t testing.TB, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts, want 3", jwt, len(parts))
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("token payload: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(data, &claims); err != nil {
		t.Fatalf("token payload: %v", err)
	}
	return claims
}

// withoutRequestParts drops the members of a problem that differ between
// two requests by nature (traceId, instance).
func withoutRequestParts(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not JSON: %s", body)
	}
	delete(m, "traceId")
	delete(m, "instance")
	return m
}

// flatten lists the keys of a menu tree, parents before children.
func flatten(nodes []menuNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Key)
		out = append(out, flatten(n.Children)...)
	}
	return out
}

// sortedKeys is for messages.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func mustEqualSet(t testing.TB, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s: got %v, want %v", what, g, w)
	}
}

func fmtFlags(f flags) string { return fmt.Sprintf("%+v", f) }
