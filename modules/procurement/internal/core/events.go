package core

import (
	"fmt"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/notify"
)

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

// Notifications tell the new phase's inbox and the creator, not the actor.
func (e Transitioned) Notifications() []notify.Draft {
	d := workflowdesigner.Audience(KindName, e.EvaluationID, e.CreatorID, e.InboxRoles, e.ActorID)
	d.Title = fmt.Sprintf("Purchase evaluation %s moved to %s", e.MaPhieu, e.To)
	d.Body = fmt.Sprintf("%q moved from %s to %s.", e.Title, e.From, e.To)
	if e.ActorID == nil {
		d.Title = fmt.Sprintf("Purchase evaluation %s moved automatically to %s", e.MaPhieu, e.To)
		d.Body = fmt.Sprintf("The SLA of %s expired: %q moved on to %s.", e.From, e.Title, e.To)
	}
	return []notify.Draft{d}
}

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

// Notifications tell the creator and Procurement, who moves the evaluation
// on once the opinions are in; not the opinion's author.
func (e OpinionSaved) Notifications() []notify.Draft {
	return []notify.Draft{{Kind: TopicOpinionSaved, Title: fmt.Sprintf("%s opinion on %s", e.Kind, e.MaPhieu),
		Body: fmt.Sprintf("The %s opinion on %s is %s.", e.Kind, e.MaPhieu, e.Verdict), EntityType: KindName,
		EntityID: e.EvaluationID, UserIDs: []string{e.CreatorID}, Roles: []string{"Procurement"}, ExceptUserID: e.AuthorID}}
}

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

// Notifications warn the phase's inbox and the creator.
func (e SLAWarning) Notifications() []notify.Draft {
	return []notify.Draft{{Kind: TopicSLAWarning, Title: "Purchase evaluation " + e.MaPhieu + " due soon",
		Body:       fmt.Sprintf("%q must leave %s by %s.", e.Title, e.Phase, e.Deadline.UTC().Format(time.RFC3339)),
		EntityType: KindName, EntityID: e.EvaluationID, UserIDs: []string{e.CreatorID}, Roles: e.InboxRoles}}
}
