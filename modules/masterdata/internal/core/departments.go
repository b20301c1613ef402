package core

import (
	"context"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/paging"
)

// Department is a unit of the organisation (PRO, CCM, FIN, …).
type Department struct {
	Record
	ManagerUserID *string `json:"managerUserId"`
}

func (Department) TableName() string { return "departments" }

func (*Department) searchParts() []string { return nil }

// DepartmentInput is the body of POST /api/departments and PUT /api/departments/{id}.
type DepartmentInput struct {
	Head
	ManagerUserID *string `json:"managerUserId"`
}

func (in *DepartmentInput) prepare(ctx context.Context, s *Service, f apperr.Fields) error {
	trimAll(&in.ManagerUserID)
	return checkManager(ctx, s.users, in.ManagerUserID, f)
}

func (in *DepartmentInput) applyTo(d *Department) { d.ManagerUserID = in.ManagerUserID }

var departmentSpec = spec{
	Kind: KindDepartment, Title: "Department", Path: "/api/departments",
	Menu: kernel.Menu{Key: "Departments", Title: "Departments", Path: "/departments", Order: 90, Grants: kernel.Grants{
		identity.RoleDrafter: "R", identity.RoleDeptManager: "R", identity.RoleProjectManager: "R",
		identity.RoleProcurement: "R", identity.RoleDirector: "R", identity.RoleHrAdmin: "CRU",
	}},
	List:    paging.Spec{Sort: map[string]string{"code": "code", "name": "name", "createdAt": "created_at"}, DefaultSort: "code"},
	Filters: []filter{{Param: "isActive", Column: "is_active"}},
}
