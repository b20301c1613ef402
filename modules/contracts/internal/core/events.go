package core

import (
	"time"

	"github.com/contractflow/contractflow/platform/money"
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
}

func (Commented) Topic() string { return TopicCommented }

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
