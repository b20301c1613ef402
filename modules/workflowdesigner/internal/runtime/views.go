package runtime

import (
	"context"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/notify"
)

// The shapes every kind answers with for its workflow facts, so that a
// contract and an evaluation show their history, moves and urgency alike.

// HistoryEntry is one history row as the API shows it. ApproverName is
// filled by the kind, which resolves all the names of a detail at once.
type HistoryEntry struct {
	ID             string    `json:"id"`
	FromPhase      string    `json:"fromPhase"`
	ToPhase        string    `json:"toPhase"`
	Decision       string    `json:"decision"`
	Comment        string    `json:"comment"`
	ApproverUserID *string   `json:"approverUserId"`
	ApproverName   *string   `json:"approverName"`
	ApprovedAt     time.Time `json:"approvedAt"`
}

// AllowedMove is a move the caller may make now.
type AllowedMove struct {
	ToPhase         string `json:"toPhase"`
	Kind            string `json:"kind"`
	CommentRequired bool   `json:"commentRequired"`
}

// Urgency is how close an inbox item is to its deadline.
type Urgency struct {
	Overdue        bool    `json:"overdue"`
	HoursRemaining float64 `json:"hoursRemaining"`
}

// History reads a document's history, oldest first.
func (r *Runtime) History(ctx context.Context, kind, id string) ([]HistoryEntry, error) {
	k, _, err := r.kind(kind)
	if err != nil {
		return nil, err
	}
	return r.store().history(ctx, k.Tables, id)
}

// AllowedMoves lists the moves p may make on doc now.
func (r *Runtime) AllowedMoves(def *engine.Definition, p authn.Principal, doc Document) []AllowedMove {
	out := []AllowedMove{}
	for _, t := range def.Allowed(doc.Phase, ActorOf(&p), doc.Facts) {
		out = append(out, AllowedMove{ToPhase: t.To, Kind: string(t.Kind), CommentRequired: t.RequiresComment()})
	}
	return out
}

// Urgency is the inbox's view of a deadline: overdue, and the SLA hours
// left (negative once overdue) to a tenth of an hour, counted on the
// calendar deadlines are counted on.
func (r *Runtime) Urgency(deadline *time.Time) Urgency {
	if deadline == nil {
		return Urgency{}
	}
	left := r.Remaining(*deadline)
	return Urgency{Overdue: left < 0, HoursRemaining: float64(left.Round(6*time.Minute)) / float64(time.Hour)}
}

// Audience is the one recipient rule of every kind's workflow news: the
// roles that see the document in its (new) phase and its owner, never the
// user who acted. A move the system made is "<kind>.autoAdvanced", any
// other "<kind>.transitioned"; the kind adds the title and body.
func Audience(kind, documentID, ownerID string, inboxRoles []string, actorID *string) notify.Draft {
	d := notify.Draft{Kind: kind + ".transitioned", EntityType: kind, EntityID: documentID,
		UserIDs: []string{ownerID}, Roles: inboxRoles}
	if actorID == nil {
		d.Kind = kind + ".autoAdvanced"
	} else {
		d.ExceptUserID = *actorID
	}
	return d
}
