package masterdata_test

import (
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
)

// endpoint is one of a resource's five operations on a given record.
type endpoint struct {
	action, method, path string
	body                 any
}

func endpoints(k kind, id string) []endpoint {
	return []endpoint{
		{"Read", "GET", k.path, nil},
		{"Read", "GET", k.path + "/" + id, nil},
		{"Create", "POST", k.path, k.body(newCode("ACC-"))},
		{"Update", "PUT", k.path + "/" + id, k.body(newCode("ACC-"))},
		{"Delete", "DELETE", k.path + "/" + id, nil},
	}
}

// Who may do what follows DESIGN §2's default grants; the guard answers 401
// before 403 before anything else.
func TestAccess(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		tokens := map[string]string{}
		for _, role := range []string{identity.RoleAuthorizedSigner, identity.RoleDrafter, identity.RoleFinance,
			identity.RoleEquipment, identity.RoleHrAdmin, identity.RoleProjectManager, identity.RoleProcurement} {
			tokens[role] = identitytest.Token(t, app, role)
		}
		// grants[role][menu] are the actions the role has; absent = none.
		grants := map[string]map[string]string{
			identity.RoleAuthorizedSigner: {},
			identity.RoleDrafter:          {"Suppliers": "RC", "Projects": "R", "Departments": "R"},
			identity.RoleFinance:          {},
			identity.RoleEquipment:        {"Suppliers": "R"},
			identity.RoleHrAdmin:          {"Departments": "CRU"},
			identity.RoleProjectManager:   {"Suppliers": "R", "Projects": "RU", "Departments": "R"},
			identity.RoleProcurement:      {"Suppliers": "CRU", "Projects": "R", "Departments": "R"},
		}
		for _, k := range kinds {
			t.Run(k.name, func(t *testing.T) {
				var scenarios []testkit.Scenario
				rec := create(t, app, admin, k.path, k.body(newCode("ACC-")))
				for _, e := range endpoints(k, rec["id"].(string)) {
					scenarios = append(scenarios, testkit.Scenario{Name: "no token " + e.method + " " + e.path,
						Request: testkit.Request{Method: e.method, Path: e.path, Body: e.body}, Status: 401, Code: "token_invalid"})
					scenarios = append(scenarios, testkit.Scenario{Name: "bad token " + e.method + " " + e.path,
						Request: testkit.Request{Method: e.method, Path: e.path, Body: e.body, Token: "not.a.jwt"}, Status: 401, Code: "token_invalid"})
					for role, g := range grants {
						if strings.Contains(g[k.menu], e.action[:1]) {
							continue
						}
						scenarios = append(scenarios, testkit.Scenario{Name: role + " " + e.method + " " + e.path,
							Request: testkit.Request{Method: e.method, Path: e.path, Body: e.body, Token: tokens[role]}, Status: 403, Code: "forbidden"})
					}
				}
				// The policy is checked before existence and validation.
				scenarios = append(scenarios,
					testkit.Scenario{Name: "403 before 404", Request: testkit.Request{Method: "GET", Path: k.path + "/0190a5c4-0000-7000-8000-000000000000",
						Token: tokens[identity.RoleAuthorizedSigner]}, Status: 403, Code: "forbidden"},
					testkit.Scenario{Name: "403 before 400", Request: testkit.Request{Method: "POST", Path: k.path, Body: map[string]any{"code": "?"},
						Token: tokens[identity.RoleFinance]}, Status: 403, Code: "forbidden"},
				)
				app.Run(t, scenarios)
				if got := get(t, app, admin, k.path+"/"+rec["id"].(string)); got["version"] != 1.0 {
					t.Errorf("refused calls changed the record: %v", got)
				}
			})
		}
		// What the grants do allow.
		app.Run(t, []testkit.Scenario{
			{Name: "Drafter creates a supplier", Request: testkit.Request{Method: "POST", Path: "/api/suppliers", Token: tokens[identity.RoleDrafter], Body: kinds[0].body(newCode("G-"))}, Status: 201},
			{Name: "Equipment reads suppliers", Request: testkit.Request{Method: "GET", Path: "/api/suppliers", Token: tokens[identity.RoleEquipment]}, Status: 200},
			{Name: "HrAdmin creates a department", Request: testkit.Request{Method: "POST", Path: "/api/departments", Token: tokens[identity.RoleHrAdmin], Body: kinds[2].body(newCode("G-"))}, Status: 201},
			{Name: "Procurement creates a supplier", Request: testkit.Request{Method: "POST", Path: "/api/suppliers", Token: tokens[identity.RoleProcurement], Body: kinds[0].body(newCode("G-"))}, Status: 201},
		})
		p := create(t, app, admin, "/api/projects", kinds[1].body(newCode("G-")))
		if r := do(t, app, "PUT", "/api/projects/"+p["id"].(string), tokens[identity.RoleProjectManager], kinds[1].body(p["code"].(string))); r.Status != 200 {
			t.Errorf("ProjectManager updates a project: %d %s", r.Status, r.Body)
		}

		// The module's menu keys reach the permission matrix.
		var me struct {
			Permissions map[string]struct{ Read, Create, Update, Delete bool }
		}
		do(t, app, "GET", "/api/auth/me", tokens[identity.RoleDrafter], nil).JSON(t, &me)
		if s := me.Permissions["Suppliers"]; !s.Read || !s.Create || s.Update || s.Delete {
			t.Errorf("Drafter's Suppliers permissions %+v, want read and create", s)
		}
		var menus []struct{ Key, Path string }
		do(t, app, "GET", "/api/menus/me", admin, nil).JSON(t, &menus)
		paths := map[string]string{}
		for _, m := range menus {
			paths[m.Key] = m.Path
		}
		for key, path := range map[string]string{"Suppliers": "/suppliers", "Projects": "/projects", "Departments": "/departments"} {
			if paths[key] != path {
				t.Errorf("menu %s has path %q, want %q (menus %v)", key, paths[key], path, paths)
			}
		}
	})
}
