// Package workflowdesigner is the public contract of the workflow module:
// document kinds register their phases and default definitions, and move
// documents with the Engine, never with a phase graph of their own.
package workflowdesigner

import (
	"context"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
)

// Types of the engine, re-exported for the modules that move documents.
type (
	Definition = engine.Definition
	Spec       = engine.Spec
	Step       = engine.Step
	Transition = engine.Transition
	MoveKind   = engine.MoveKind
	Facts      = engine.Facts
	Actor      = engine.Actor
	Kind       = engine.Kind
	Default    = engine.Default
)

// Move kinds and approval decisions.
const (
	Forward = engine.Forward
	Return  = engine.Return
	Reject  = engine.Reject
	Bypass  = engine.Bypass

	DecisionApprove     = engine.DecisionApprove
	DecisionReturn      = engine.DecisionReturn
	DecisionReject      = engine.DecisionReject
	DecisionAutoApprove = engine.DecisionAutoApprove
)

// Engine serves workflow definitions. Obtain it with
// kernel.Need[workflowdesigner.Engine].
type Engine interface {
	// RegisterKind declares a document kind at provision.
	RegisterKind(k Kind)
	// ForDocumentType returns the definition assigned to a document type,
	// which a new document pins.
	ForDocumentType(ctx context.Context, documentType string) (*Definition, error)
	// Definition returns a pinned definition by id.
	Definition(ctx context.Context, id string) (*Definition, error)
	// Published lists the published definitions of a kind.
	Published(ctx context.Context, kind string) ([]*Definition, error)
}
