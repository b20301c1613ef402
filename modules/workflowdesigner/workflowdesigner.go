// Package workflowdesigner is the public contract of the workflow module:
// document kinds register their phases, tables and default definitions, and
// their documents move through the module's runtime, never through a phase
// graph, history table writer or SLA job of their own.
package workflowdesigner

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/runtime"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/notify"
	"github.com/contractflow/contractflow/platform/paging"
)

// Types of the engine and the runtime, re-exported for the modules that
// move documents.
type (
	Definition   = engine.Definition
	Spec         = engine.Spec
	Step         = engine.Step
	Transition   = engine.Transition
	MoveKind     = engine.MoveKind
	Facts        = engine.Facts
	Actor        = engine.Actor
	Default      = engine.Default
	Kind         = runtime.Kind
	Tables       = runtime.Tables
	Precondition = runtime.Precondition
	Document     = runtime.Document
	Hook         = runtime.Hook
	Moved        = runtime.Moved
	MoveRequest  = runtime.MoveRequest
	Start        = runtime.Start
	Scope        = runtime.Scope
	Link         = runtime.Link
	InFlight     = runtime.InFlight
	PhaseCount   = runtime.PhaseCount
	SLABreached  = runtime.SLABreached
	HistoryEntry = runtime.HistoryEntry
	AllowedMove  = runtime.AllowedMove
	Urgency      = runtime.Urgency
)

// Move kinds, approval decisions and SLA breach policies.
const (
	Forward = engine.Forward
	Return  = engine.Return
	Reject  = engine.Reject
	Bypass  = engine.Bypass

	DecisionApprove     = engine.DecisionApprove
	DecisionReturn      = engine.DecisionReturn
	DecisionReject      = engine.DecisionReject
	DecisionAutoApprove = engine.DecisionAutoApprove

	BreachAdvance = engine.BreachAdvance
	BreachRemind  = engine.BreachRemind
)

// The ways a move is refused, for errors.Is.
var (
	ErrNoSuchMove         = engine.ErrNoSuchMove
	ErrMoveForbidden      = engine.ErrMoveForbidden
	ErrStaleDocument      = engine.ErrStaleDocument
	ErrPreconditionFailed = engine.ErrPreconditionFailed
)

// Audience is the one recipient rule of workflow news (the new inbox and
// the owner, never the actor) as a notification draft of kind.
func Audience(kind, documentID, ownerID string, inboxRoles []string, actorID *string) notify.Draft {
	return runtime.Audience(kind, documentID, ownerID, inboxRoles, actorID)
}

// InboxPage reads one page of q, a kind's live documents, under
// sc.Inbox(): columns into each row's fields, with the exact total from the
// runtime's counts (read in the same statement) rather than a COUNT(*).
func InboxPage[T any](ctx context.Context, sc Scope, q *gorm.DB, columns string, req paging.Request, fields func(*T) []any) ([]T, int64, error) {
	return runtime.InboxPage(ctx, sc, q, columns, req, fields)
}

// ListPage is one page of kind's documents that p may see, as a list or an
// inbox: read under p's scope, then shaped in one batch (names resolved once
// per page, not per row).
func ListPage[Row, Item any](ctx context.Context, e Engine, kind string, p authn.Principal, req paging.Request,
	read func(context.Context, Scope, paging.Request) ([]Row, int64, error),
	shape func(context.Context, []Row) ([]Item, error)) (paging.Page[Item], error) {
	sc, err := e.Scope(ctx, kind, p)
	if err != nil {
		return paging.Page[Item]{}, err
	}
	rows, total, err := read(ctx, sc, req)
	if err != nil {
		return paging.Page[Item]{}, err
	}
	items, err := shape(ctx, rows)
	if err != nil {
		return paging.Page[Item]{}, err
	}
	return paging.NewPage(items, req, total), nil
}

// Each is shape followed by item on each of its results: for an inbox page,
// the kind's summaries each made an item with its urgency.
func Each[Row, Sum, Item any](shape func(context.Context, []Row) ([]Sum, error), item func(Sum) Item) func(context.Context, []Row) ([]Item, error) {
	return func(ctx context.Context, rows []Row) ([]Item, error) {
		sums, err := shape(ctx, rows)
		if err != nil {
			return nil, err
		}
		out := make([]Item, len(sums))
		for i, sm := range sums {
			out[i] = item(sm)
		}
		return out, nil
	}
}

// TransitionRequest is a user's request to move a document: the body of
// POST …/{id}/transitions of every kind.
type TransitionRequest struct {
	ToPhase string `json:"toPhase" validate:"required"`
	Comment string `json:"comment" validate:"max=4000"`
	Version *int   `json:"version"`
}

// MoveFor makes the move p asks for on doc of kind: the comment trimmed and
// the request checked, then e.Move. The caller has checked that p may see
// doc.
func MoveFor(ctx context.Context, e Engine, kind string, doc Document, p *authn.Principal, in TransitionRequest) (*Moved, error) {
	in.Comment = strings.TrimSpace(in.Comment)
	if err := httpx.Validate(in); err != nil {
		return nil, err
	}
	return e.Move(ctx, MoveRequest{Kind: kind, Doc: doc, To: in.ToPhase, By: p, Comment: in.Comment, Version: in.Version})
}

// ActorOf is who asks for a move; nil is the system.
func ActorOf(p *authn.Principal) Actor { return runtime.ActorOf(p) }

// Engine serves workflow definitions and moves documents of every
// registered kind. Obtain it with kernel.Need[workflowdesigner.Engine].
type Engine interface {
	// RegisterKind declares a document kind at provision.
	RegisterKind(k Kind)
	// Hook adds work inside every move of kind (a code, a reservation).
	Hook(kind string, h Hook)
	// ForDocumentType returns the definition assigned to a document type.
	ForDocumentType(ctx context.Context, documentType string) (*Definition, error)
	// Definition returns a pinned definition by id.
	Definition(ctx context.Context, id string) (*Definition, error)
	// Published lists the published definitions of a kind.
	Published(ctx context.Context, kind string) ([]*Definition, error)

	// Start is where a new document of documentType begins: the assigned
	// definition it pins, its initial phase and that phase's deadline.
	Start(ctx context.Context, documentType string) (Start, error)
	// Move checks and applies one move in a transaction (joining ctx's).
	Move(ctx context.Context, req MoveRequest) (*Moved, error)
	// Scope is what p may list of kind's documents, as SQL conditions.
	Scope(ctx context.Context, kind string, p authn.Principal) (Scope, error)
	// CanSee applies the visibility rule to one document and returns its
	// pinned definition.
	CanSee(ctx context.Context, p authn.Principal, doc Document) (*Definition, error)
	// AllowedMoves lists the moves p may make on doc now.
	AllowedMoves(def *Definition, p authn.Principal, doc Document) []AllowedMove
	// History reads a document's history, oldest first (names left to the kind).
	History(ctx context.Context, kind, id string) ([]HistoryEntry, error)
	// Remaining is the SLA time left until deadline, counted as deadlines are.
	Remaining(deadline time.Time) time.Duration
	// Urgency is an inbox item's overdue flag and hours remaining.
	Urgency(deadline *time.Time) Urgency
}
