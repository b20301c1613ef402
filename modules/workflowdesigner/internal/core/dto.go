package core

import (
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
)

// Definition statuses as the API spells them (DESIGN §4.1).
const (
	StatusDraft     = "Draft"
	StatusPublished = "Published"
)

// DefinitionDTO is a workflow definition as the designer API shows it.
type DefinitionDTO struct {
	ID           string          `json:"id"`
	Key          string          `json:"key"`
	Version      int             `json:"version"`
	DocumentKind string          `json:"documentKind"`
	Name         string          `json:"name"`
	Status       string          `json:"status"`
	InitialPhase string          `json:"initialPhase"`
	Steps        []StepDTO       `json:"steps"`
	Transitions  []TransitionDTO `json:"transitions"`
	PublishedAt  *time.Time      `json:"publishedAt"`
	CreatedAt    time.Time       `json:"createdAt"`
	CreatedBy    *string         `json:"createdBy"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	UpdatedBy    *string         `json:"updatedBy"`
}

// StepDTO is one step: a phase, its SLA, whose inbox it is in and what the
// SLA job does when its deadline passes.
type StepDTO struct {
	Phase       string   `json:"phase"`
	SLAHours    int      `json:"slaHours"`
	Terminal    bool     `json:"terminal"`
	InboxRoles  []string `json:"inboxRoles"`
	OnSLABreach string   `json:"onSlaBreach"`
}

// TransitionDTO is one move. Precondition names a check the document kind
// declares (an opinion quorum, a budget) that refuses the move until it
// holds; empty for none.
type TransitionDTO struct {
	From         string   `json:"from"`
	To           string   `json:"to"`
	Kind         string   `json:"kind"`
	Roles        []string `json:"roles"`
	Guard        string   `json:"guard"`
	Normal       bool     `json:"normal"`
	Precondition string   `json:"precondition"`
}

// CreateRequest is the body of POST /api/workflows.
type CreateRequest struct {
	DocumentKind string  `json:"documentKind"`
	Key          string  `json:"key"`
	Name         string  `json:"name"`
	FromID       *string `json:"fromId"`
}

// DraftRequest is the body of PUT /api/workflows/{id}: the draft's name
// and content, replacing the old. Any well-typed content is stored; the
// rules of DESIGN §4 are validate's and publish's.
type DraftRequest struct {
	Name         string          `json:"name" validate:"max=200"`
	InitialPhase string          `json:"initialPhase"`
	Steps        []StepDTO       `json:"steps" validate:"max=100"`
	Transitions  []TransitionDTO `json:"transitions" validate:"max=500"`
}

// ValidationDTO is the answer of POST /api/workflows/{id}/validate.
type ValidationDTO struct {
	Valid    bool             `json:"valid"`
	Problems []engine.Problem `json:"problems"`
}

// AssignmentDTO is the definition a document type's new documents pin.
// The definition's fields are null while the type has no assignment.
type AssignmentDTO struct {
	DocumentType         string  `json:"documentType"`
	WorkflowDefinitionID *string `json:"workflowDefinitionId"`
	Key                  *string `json:"key"`
	Version              *int    `json:"version"`
}

// AssignRequest is the body of PUT /api/workflows/assignments.
type AssignRequest struct {
	DocumentType         string `json:"documentType"`
	WorkflowDefinitionID string `json:"workflowDefinitionId"`
}

func statusName(stored string) string {
	if stored == statusPublished {
		return StatusPublished
	}
	return StatusDraft
}

func dtoOf(row *definitionRow, spec engine.Spec) DefinitionDTO {
	d := DefinitionDTO{ID: row.ID, Key: row.DefKey, Version: row.Version, DocumentKind: row.DocumentKind, Name: row.Name,
		Status: statusName(row.Status), InitialPhase: spec.InitialPhase, Steps: make([]StepDTO, len(spec.Steps)),
		Transitions: make([]TransitionDTO, len(spec.Transitions)),
		CreatedAt:   row.CreatedAt.UTC(), CreatedBy: row.CreatedBy, UpdatedAt: row.UpdatedAt.UTC(), UpdatedBy: row.UpdatedBy}
	if row.PublishedAt != nil {
		at := row.PublishedAt.UTC()
		d.PublishedAt = &at
	}
	for i, s := range spec.Steps {
		d.Steps[i] = StepDTO{Phase: s.Phase, SLAHours: s.SLAHours, Terminal: s.Terminal, InboxRoles: list(s.InboxRoles),
			OnSLABreach: s.Breach()}
	}
	for i, t := range spec.Transitions {
		d.Transitions[i] = TransitionDTO{From: t.From, To: t.To, Kind: string(t.Kind), Roles: list(t.Roles), Guard: t.Guard,
			Normal: t.Normal, Precondition: t.Precondition}
	}
	return d
}

// content is the engine's form of a draft request's content.
func (in DraftRequest) content() draftContent {
	c := draftContent{InitialPhase: in.InitialPhase, Steps: make([]engine.Step, len(in.Steps)),
		Transitions: make([]engine.Transition, len(in.Transitions))}
	for i, s := range in.Steps {
		c.Steps[i] = engine.Step{Phase: s.Phase, SLAHours: s.SLAHours, Terminal: s.Terminal, InboxRoles: list(s.InboxRoles),
			OnSLABreach: s.OnSLABreach}
		c.Steps[i].OnSLABreach = c.Steps[i].Breach()
	}
	for i, t := range in.Transitions {
		c.Transitions[i] = engine.Transition{From: t.From, To: t.To, Kind: engine.MoveKind(t.Kind), Roles: list(t.Roles),
			Guard: t.Guard, Normal: t.Normal, Precondition: t.Precondition}
	}
	return c
}

// list is xs, or an empty list for nil: lists are [] in JSON, never null.
func list(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
