package runtime

import (
	"context"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/events"
)

// Kind is a document kind that moves on workflows, registered by the module
// that owns the documents. The owner lends the runtime the workflow columns
// of its tables (Tables) and supplies only what is its own: how to load a
// document, its events, and the checks its moves may name.
type Kind struct {
	Name          string
	Phases        []string // the phase set definitions of this kind may use
	DocumentTypes []string // what assignments map (e.g. each contract type)
	Defaults      []engine.Default
	Facts         []string // the boolean facts guards may read
	Preconditions []Precondition
	Tables        Tables

	// Load reads a live document by id for the runtime's own moves and
	// warnings (the SLA job); an unknown or deleted id is apperr.NotFound.
	Load func(ctx context.Context, id string) (Document, error)
	// Transitioned is the kind's event for a move; the runtime publishes
	// it inside the move's transaction (an InTx subscriber may refuse).
	Transitioned func(m *Moved) events.Event
	// SLAWarning is the kind's event for a document nearing its deadline.
	SLAWarning func(d Document, inboxRoles []string) events.Event
}

// Tables names where a kind's documents and their history live. The
// documents table has the columns id, phase, sla_deadline,
// sla_warning_sent, workflow_definition_id, history_hash, version,
// updated_at, updated_by and deleted_at, plus the Owner column; the history
// table has id, the Key column, from_phase, to_phase, approver_user_id,
// decision, comment, approved_at, hash and prev_hash.
type Tables struct {
	Documents string // e.g. "contracts"
	Owner     string // the owner's user id column, e.g. "drafter_id"
	History   string // e.g. "contract_approvals"
	Key       string // the history's document column, e.g. "contract_id"
}

// Precondition refuses an existing move until it holds, with its own code
// (DESIGN §1: opinions_missing, budget_exceeded). Moves name it in their
// Precondition field; Check runs inside the move's transaction.
type Precondition struct {
	Name  string                                                           // what transitions name, e.g. "opinionsComplete"
	Code  string                                                           // the problem code when it fails
	Check func(ctx context.Context, d Document) (reason string, err error) // reason "" means it holds
}

// Declared is the pure declaration definitions are validated against.
func (k Kind) Declared() engine.Kind {
	names := make([]string, len(k.Preconditions))
	for i, p := range k.Preconditions {
		names[i] = p.Name
	}
	return engine.Kind{Name: k.Name, Phases: k.Phases, DocumentTypes: k.DocumentTypes, Defaults: k.Defaults,
		Facts: k.Facts, Preconditions: names}
}

// Document is what the runtime needs of a document, loaded by its owner.
type Document struct {
	ID           string
	Phase        string
	DefinitionID string
	OwnerID      string
	Deadline     *time.Time
	Version      int
	HistoryHash  string // the hash of its newest history row, "" before the first
	Facts        engine.Facts
	Data         any // the owner's own record, for its hooks and events
}

// Hook is a kind's work inside every move's transaction, before the
// compare-and-set: generate a code, reserve a budget. It may refuse the
// move by returning an error, and may write columns of the document with
// Moved.Set.
type Hook func(ctx context.Context, m *Moved) error

// Moved describes a move in progress (to hooks) and done (to the caller).
type Moved struct {
	Kind       string
	Doc        Document // as it was before the move
	Definition *engine.Definition
	Transition engine.Transition
	From, To   string
	Decision   string
	Comment    string
	ActorID    *string // nil when the system moved the document
	At         time.Time
	Deadline   *time.Time // the new deadline; nil in a terminal phase
	InboxRoles []string   // the roles that see the document in its new phase
	HistoryID  string
	Hash       string
	// Warnings are what hooks want the caller to know about a move they
	// let through (a budget line overdrawn under Warn); the history row's
	// comment records them too.
	Warnings []string
	set      map[string]any
}

// Entry is the history row the move wrote, as History reads it back.
func (m *Moved) Entry() HistoryEntry {
	return HistoryEntry{ID: m.HistoryID, FromPhase: m.From, ToPhase: m.To, Decision: m.Decision, Comment: m.Comment,
		ApproverUserID: m.ActorID, ApprovedAt: m.At}
}

// Warn records a warning about the move.
func (m *Moved) Warn(message string) { m.Warnings = append(m.Warnings, message) }

// Set writes column of the document in the move's compare-and-set.
func (m *Moved) Set(column string, value any) {
	if m.set == nil {
		m.set = map[string]any{}
	}
	m.set[column] = value
}

// Get returns what a hook set for column.
func (m *Moved) Get(column string) (any, bool) {
	v, ok := m.set[column]
	return v, ok
}
