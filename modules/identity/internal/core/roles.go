package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/contractflow/contractflow/platform/authz"
	"github.com/contractflow/contractflow/platform/kernel"
)

// roleSeed is one of the twelve roles (DESIGN §2).
type roleSeed struct {
	Name, Code, Description string
}

// Roles are seeded in this order.
var seedRoles = []roleSeed{
	{"Admin", "", "Administers users, permissions and workflows; passes every permission check."},
	{"Drafter", "", "Drafts contracts and purchase evaluations."},
	{"DeptManager", "", "Manages a department's contracts."},
	{"ProjectManager", "", "Reviews contracts and evaluations for a project."},
	{"Procurement", "PRO", "Procurement department."},
	{"CostControl", "CCM", "Cost control: checks contract costs."},
	{"Finance", "FIN", "Finance department."},
	{"Accounting", "ACT", "Accounting department."},
	{"Equipment", "EQU", "Equipment department."},
	{"Director", "", "Approves and signs on behalf of the company."},
	{"AuthorizedSigner", "", "Signs contracts under a power of attorney."},
	{"HrAdmin", "", "Administration: seals and publishes signed contracts."},
}

// OwnMenus are the menu keys the identity module guards, with their default
// grants (DESIGN §2). Every other key, and its grants, is declared by the
// module that owns it; the seed assembles the matrix from what the enabled
// modules declare.
func OwnMenus() []kernel.Menu {
	return []kernel.Menu{
		{Key: "Users", Title: "Users", Path: "/users", Order: 100, Grants: kernel.Grants{"HrAdmin": "R"}},
		{Key: "Permissions", Title: "Permissions", Path: "/users/permissions", ParentKey: "Users", Order: 110},
	}
}

// checkGrants refuses default grants the seed could not honour: a role that
// does not exist, a grant to Admin (which passes every policy and whose
// flags cannot be lowered) or letters other than C, R, U, D. The error names
// the menu key, which names its module.
func checkGrants(menus []kernel.Menu) error {
	var problems []error
	for _, m := range menus {
		for _, role := range slices.Sorted(maps.Keys(m.Grants)) {
			switch {
			case authz.PassesEveryPolicy(role):
				problems = append(problems, fmt.Errorf("menu key %s grants %s, which passes every policy: leave it out", m.Key, role))
			case !slices.ContainsFunc(seedRoles, func(r roleSeed) bool { return r.Name == role }):
				problems = append(problems, fmt.Errorf("menu key %s grants unknown role %q", m.Key, role))
			}
			if _, err := authz.ActionsOf(m.Grants[role]); err != nil {
				problems = append(problems, fmt.Errorf("menu key %s, role %s: %w", m.Key, role, err))
			}
		}
	}
	return errors.Join(problems...)
}

// defaultFlags are the flags a role is seeded with on a menu key: every flag
// for Admin, the declared grant for the others.
func defaultFlags(role string, m kernel.Menu) Flags {
	if authz.PassesEveryPolicy(role) {
		return Flags{true, true, true, true}
	}
	actions, _ := authz.ActionsOf(m.Grants[role]) // checked by checkGrants at provision
	return Flags{
		Read:   slices.Contains(actions, authz.Read),
		Create: slices.Contains(actions, authz.Create),
		Update: slices.Contains(actions, authz.Update),
		Delete: slices.Contains(actions, authz.Delete),
	}
}
