package core

import (
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
)

type definitionRow struct {
	ID           string
	DefKey       string
	Version      int
	DocumentKind string
	Name         string
	Status       string
	InitialPhase string
	CreatedAt    time.Time
	CreatedBy    *string
	UpdatedAt    time.Time
	UpdatedBy    *string
	PublishedAt  *time.Time
	Draft        *string // a draft's content (draftContent as JSON); nil once published
	Revision     int     // one more on every write
}

func (definitionRow) TableName() string { return "workflow_definitions" }

type stepRow struct {
	ID           string
	DefinitionID string
	Phase        string
	SLAHours     int `gorm:"column:sla_hours"`
	IsTerminal   bool
	OnSLABreach  string `gorm:"column:on_sla_breach"`
	SortOrder    int
}

func (stepRow) TableName() string { return "workflow_steps" }

type stepApproverRow struct {
	StepID string
	Role   string
}

func (stepApproverRow) TableName() string { return "workflow_step_approvers" }

type transitionRow struct {
	ID           string
	DefinitionID string
	FromPhase    string
	ToPhase      string
	Kind         string
	Guard        *string
	IsNormal     bool
	Precondition string
	SortOrder    int
}

func (transitionRow) TableName() string { return "workflow_transitions" }

type transitionRoleRow struct {
	TransitionID string
	Role         string
}

func (transitionRoleRow) TableName() string { return "workflow_transition_roles" }

type assignmentRow struct {
	DocumentType string `gorm:"primaryKey"`
	DefinitionID string
	UpdatedAt    time.Time
	UpdatedBy    *string
}

func (assignmentRow) TableName() string { return "workflow_type_assignments" }

// Definition statuses, as stored; the API spells them Draft and Published.
const (
	statusDraft     = "draft"
	statusPublished = "published"
)

// draftContent is what the draft column of a draft holds: the part of a
// definition PUT replaces, other than its name.
type draftContent struct {
	InitialPhase string              `json:"initialPhase"`
	Steps        []engine.Step       `json:"steps"`
	Transitions  []engine.Transition `json:"transitions"`
}
