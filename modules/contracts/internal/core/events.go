package core

import (
	"fmt"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/notify"
)

// Event topics the module publishes (past tense, DESIGN §10 names).
const (
	TopicCreated      = "contract.created"
	TopicUpdated      = "contract.updated"
	TopicTransitioned = "contract.transitioned"
	TopicDeleted      = "contract.deleted"
	TopicCommented    = "contract.commented"
	TopicSLAWarning   = "contract.slaWarning"
)

// Created is published inside the transaction that drafts a contract; an
// InTx subscriber may refuse it (budget checks the line it names).
type Created struct {
	ContractID   string
	DrafterID    string
	ProjectID    *string
	Value        money.Amount
	BudgetLineID *string
}

func (Created) Topic() string { return TopicCreated }

// Updated is published inside the transaction that edits a draft; an InTx
// subscriber may refuse it.
type Updated struct {
	ContractID   string
	ProjectID    *string
	Value        money.Amount
	BudgetLineID *string
}

func (Updated) Topic() string { return TopicUpdated }

// Transitioned is published inside the move's transaction: an InTx
// subscriber may refuse the move by returning an error (the budget check);
// AfterCommit subscribers notify people.
type Transitioned struct {
	ContractID   string
	Title        string
	From, To     string
	Decision     string
	ActorID      *string // nil when the system moved the contract
	DrafterID    string
	InboxRoles   []string // roles that see the contract in its new phase
	Value        money.Amount
	BudgetLineID *string
	MaHopDong    *string
	At           time.Time
}

func (Transitioned) Topic() string { return TopicTransitioned }

// Notifications tell the new phase's inbox and the drafter, not the actor;
// a move the system made (the SLA job) is contract.autoAdvanced.
func (e Transitioned) Notifications() []notify.Draft {
	d := workflowdesigner.Audience(KindName, e.ContractID, e.DrafterID, e.InboxRoles, e.ActorID)
	d.Title, d.Body = "Contract moved to "+e.To, fmt.Sprintf("%q moved from %s to %s.", e.Title, e.From, e.To)
	if e.ActorID == nil {
		d.Title = "Contract moved automatically to " + e.To
		d.Body = fmt.Sprintf("The SLA of %s expired: %q moved on to %s.", e.From, e.Title, e.To)
	}
	return []notify.Draft{d}
}

// Deleted is published inside the transaction that soft-deletes a contract.
type Deleted struct {
	ContractID   string
	BudgetLineID *string
	Value        money.Amount
}

func (Deleted) Topic() string { return TopicDeleted }

// Commented is published when a comment is posted.
type Commented struct {
	ContractID, CommentID, AuthorID, DrafterID, Phase string
	Title                                             string
	InboxRoles                                        []string // roles that see the contract in Phase
}

func (Commented) Topic() string { return TopicCommented }

// Notifications tell the drafter and the current phase's inbox, not the author.
func (e Commented) Notifications() []notify.Draft {
	return []notify.Draft{{Kind: TopicCommented, Title: "New comment on a contract",
		Body: fmt.Sprintf("A comment was posted on %q in %s.", e.Title, e.Phase), EntityType: KindName, EntityID: e.ContractID,
		UserIDs: []string{e.DrafterID}, Roles: e.InboxRoles, ExceptUserID: e.AuthorID}}
}

// SLAWarning is published once per phase, sla.warningHours before the deadline.
type SLAWarning struct {
	ContractID string
	Title      string
	Phase      string
	Deadline   time.Time
	InboxRoles []string
	DrafterID  string
}

func (SLAWarning) Topic() string { return TopicSLAWarning }

// Notifications warn the phase's inbox and the drafter.
func (e SLAWarning) Notifications() []notify.Draft {
	return []notify.Draft{{Kind: TopicSLAWarning, Title: "Contract due soon",
		Body:       fmt.Sprintf("%q must leave %s by %s.", e.Title, e.Phase, e.Deadline.UTC().Format(time.RFC3339)),
		EntityType: KindName, EntityID: e.ContractID, UserIDs: []string{e.DrafterID}, Roles: e.InboxRoles}}
}
