package core

import (
	"context"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/paging"
)

// ProjectStatuses are the stages of a project; Planning is the default.
var ProjectStatuses = []string{"Planning", "Active", "Closed"}

// Project is a construction project contracts and budgets belong to.
type Project struct {
	Record
	Client        *string `json:"client"`
	Location      *string `json:"location"`
	ManagerUserID *string `json:"managerUserId"`
	StartDate     *Date   `json:"startDate"`
	EndDate       *Date   `json:"endDate"`
	Status        string  `json:"status"`
}

func (Project) TableName() string { return "projects" }

func (*Project) searchParts() []string { return nil }

// ProjectInput is the body of POST /api/projects and PUT /api/projects/{id}.
type ProjectInput struct {
	Head
	Client        *string `json:"client" validate:"omitempty,max=200"`
	Location      *string `json:"location" validate:"omitempty,max=300"`
	ManagerUserID *string `json:"managerUserId"`
	StartDate     *string `json:"startDate"`
	EndDate       *string `json:"endDate"`
	// Status defaults to Planning when omitted.
	Status string `json:"status" validate:"omitempty,oneof=Planning Active Closed"`

	start, end *Date // parsed by prepare
}

func (in *ProjectInput) prepare(ctx context.Context, s *Service, f apperr.Fields) error {
	trimAll(&in.Client, &in.Location, &in.ManagerUserID, &in.StartDate, &in.EndDate)
	if in.Status == "" {
		in.Status = "Planning"
	}
	in.start = checkDate("StartDate", in.StartDate, f)
	in.end = checkDate("EndDate", in.EndDate, f)
	if in.start != nil && in.end != nil && *in.end < *in.start {
		f.Add("EndDate", "Must not be before StartDate.")
	}
	return checkManager(ctx, s.users, in.ManagerUserID, f)
}

func (in *ProjectInput) applyTo(p *Project) {
	p.Client, p.Location, p.ManagerUserID = in.Client, in.Location, in.ManagerUserID
	p.StartDate, p.EndDate, p.Status = in.start, in.end, in.Status
}

var projectSpec = spec{
	Kind: KindProject, Title: "Project", Path: "/api/projects",
	Menu: kernel.Menu{Key: "Projects", Title: "Projects", Path: "/projects", Order: 80, Grants: kernel.Grants{
		identity.RoleDrafter: "R", identity.RoleDeptManager: "R", identity.RoleProjectManager: "RU",
		identity.RoleProcurement: "R", identity.RoleCostControl: "R", identity.RoleDirector: "R",
	}},
	List: paging.Spec{Sort: map[string]string{"code": "code", "name": "name", "createdAt": "created_at", "startDate": "start_date"}, DefaultSort: "code"},
	Filters: []filter{
		{Param: "status", Column: "status", Values: ProjectStatuses},
		{Param: "isActive", Column: "is_active"},
	},
}
