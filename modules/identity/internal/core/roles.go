package core

import "github.com/contractflow/contractflow/platform/kernel"

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

// OwnMenus are the menu keys the identity module guards.
func OwnMenus() []kernel.Menu {
	return []kernel.Menu{
		{Key: "Users", Title: "Users", Path: "/users", Order: 100},
		{Key: "Permissions", Title: "Permissions", Path: "/users/permissions", ParentKey: "Users", Order: 110},
	}
}

// defaultGrants is DESIGN §2's default matrix for roles other than Admin,
// as letters of Create, Read, Update, Delete per menu key.
var defaultGrants = map[string]map[string]string{
	"Drafter": {"Dashboard": "R", "Contracts": "CRUD", "Forms": "R", "PurchaseEvaluations": "CRU",
		"Suppliers": "RC", "Projects": "R", "Departments": "R", "Reports": "R"},
	"DeptManager": {"Dashboard": "R", "Contracts": "CRUD", "Forms": "R", "PurchaseEvaluations": "RU", "Budgets": "R",
		"Suppliers": "R", "Projects": "R", "Departments": "R", "Reports": "R"},
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

func flagsOf(letters string) Flags {
	var f Flags
	for _, c := range letters {
		switch c {
		case 'R':
			f.Read = true
		case 'C':
			f.Create = true
		case 'U':
			f.Update = true
		case 'D':
			f.Delete = true
		}
	}
	return f
}
