package core

import "time"

// Event topics the module publishes (DESIGN §10 names).
const (
	TopicTransitioned = "purchaseEvaluation.transitioned"
	TopicOpinionSaved = "purchaseEvaluation.opinionSaved"
	TopicSLAWarning   = "purchaseEvaluation.slaWarning"
)

// Transitioned is published by the workflow runtime inside the move's
// transaction: an InTx subscriber may refuse the move; AfterCommit
// subscribers notify the new phase's inbox and the creator.
type Transitioned struct {
	EvaluationID string
	MaPhieu      string
	Title        string
	Policy       string
	From, To     string
	Decision     string
	ActorID      *string // nil when the system moved it
	CreatorID    string
	InboxRoles   []string // roles that see it in its new phase
	At           time.Time
}

func (Transitioned) Topic() string { return TopicTransitioned }

// OpinionSaved is published inside the transaction that saves a
// department's opinion (first time or again).
type OpinionSaved struct {
	EvaluationID string
	MaPhieu      string
	Kind         string
	Verdict      string
	AuthorID     string
	CreatorID    string
	At           time.Time
}

func (OpinionSaved) Topic() string { return TopicOpinionSaved }

// SLAWarning is published once per phase, sla.warningHours before the deadline.
type SLAWarning struct {
	EvaluationID string
	MaPhieu      string
	Title        string
	Phase        string
	Deadline     time.Time
	InboxRoles   []string
	CreatorID    string
}

func (SLAWarning) Topic() string { return TopicSLAWarning }
