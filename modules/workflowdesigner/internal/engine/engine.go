// Package engine answers workflow questions for one definition: is this move
// allowed for these roles, what is the normal next move, which roles see a
// phase in their inbox, how long is its SLA. It is pure: definitions are
// values, loaded and cached by the caller.
package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/contractflow/contractflow/platform/apperr"
)

// MoveKind classifies a transition.
type MoveKind string

const (
	Forward MoveKind = "forward"
	Return  MoveKind = "return"
	Reject  MoveKind = "reject"
	Bypass  MoveKind = "bypass"
)

// Decisions recorded in approval rows.
const (
	DecisionApprove     = "Approve"
	DecisionReturn      = "Return"
	DecisionReject      = "Reject"
	DecisionAutoApprove = "AutoApprove"
)

// What the SLA job does when a step's deadline passes (DESIGN §4.1).
const (
	BreachAdvance = "advance" // take the step's normal move as the system
	BreachRemind  = "remind"  // stay, and remind the inbox and the owner
)

// Step is one phase of a definition.
type Step struct {
	Phase      string   `json:"phase"`
	SLAHours   int      `json:"slaHours"`
	InboxRoles []string `json:"inboxRoles"`
	Terminal   bool     `json:"terminal"`
	// OnSLABreach is BreachAdvance (also when empty) or BreachRemind.
	OnSLABreach string `json:"onSlaBreach"`
}

// Breach is what the SLA job does when the step's deadline passes.
func (s Step) Breach() string {
	if s.OnSLABreach == "" {
		return BreachAdvance
	}
	return s.OnSLABreach
}

// Transition is one allowed move.
type Transition struct {
	From   string   `json:"from"`
	To     string   `json:"to"`
	Kind   MoveKind `json:"kind"`
	Roles  []string `json:"roles"`
	Guard  string   `json:"guard,omitempty"` // "fact" or "!fact": the move exists only when it holds
	Normal bool     `json:"normal"`          // the step's default move (the SLA job takes it)
	// Precondition names a check of the document kind that refuses this
	// existing move until it holds (an opinion quorum), with its own code.
	Precondition string `json:"precondition,omitempty"`
}

// RequiresComment reports whether the move needs a comment.
func (t Transition) RequiresComment() bool { return t.Kind == Return || t.Kind == Reject }

// Decision is what an approval row records for the move.
func (t Transition) Decision(system bool) string {
	switch {
	case system:
		return DecisionAutoApprove
	case t.Kind == Return:
		return DecisionReturn
	case t.Kind == Reject:
		return DecisionReject
	}
	return DecisionApprove
}

// Spec is the content of a definition.
type Spec struct {
	Key          string       `json:"key"`
	Name         string       `json:"name"`
	InitialPhase string       `json:"initialPhase"`
	Steps        []Step       `json:"steps"`
	Transitions  []Transition `json:"transitions"`
}

// Definition is one version of a workflow, as pinned by documents.
type Definition struct {
	ID           string
	Version      int
	DocumentKind string
	Published    bool
	Spec
}

// Facts are the document's boolean fields that guards read.
type Facts map[string]bool

// Actor is who asks for a move: users with roles, Admin, or the system.
type Actor struct {
	Roles  []string
	Admin  bool
	System bool
}

// The ways a move is refused, as errors.Is targets. Each travels inside an
// *apperr.Error whose kind and code platform/httpx maps to a problem.
var (
	ErrNoSuchMove         = errors.New("workflow: no such move")
	ErrMoveForbidden      = errors.New("workflow: the caller's roles may not make this move")
	ErrStaleDocument      = errors.New("workflow: the document moved meanwhile")
	ErrPreconditionFailed = errors.New("workflow: a precondition of the move does not hold")
)

func noSuchMove(detail string) *apperr.Error {
	e := apperr.Conflict("invalid_transition", detail)
	e.Err = ErrNoSuchMove
	return e
}

// StaleDocument reports a move whose document left its phase meanwhile.
func StaleDocument(detail string) *apperr.Error {
	e := apperr.Conflict("invalid_transition", detail)
	e.Err = ErrStaleDocument
	return e
}

// PreconditionFailed reports a move that exists but may not be made yet.
func PreconditionFailed(code, detail string) *apperr.Error {
	e := apperr.Conflict(code, detail)
	e.Err = ErrPreconditionFailed
	return e
}

// Step returns the step of phase.
func (d *Definition) Step(phase string) (Step, bool) { return d.step(phase) }

func (d *Definition) step(phase string) (Step, bool) {
	for _, s := range d.Steps {
		if s.Phase == phase {
			return s, true
		}
	}
	return Step{}, false
}

// HasPhase reports whether the definition has a step for phase.
func (d *Definition) HasPhase(phase string) bool {
	_, ok := d.step(phase)
	return ok
}

// Terminal reports whether phase ends the workflow.
func (d *Definition) Terminal(phase string) bool {
	s, ok := d.step(phase)
	return ok && s.Terminal
}

// SLA is the time allowed in phase; zero for terminal phases.
func (d *Definition) SLA(phase string) time.Duration {
	s, ok := d.step(phase)
	if !ok || s.Terminal {
		return 0
	}
	return time.Duration(s.SLAHours) * time.Hour
}

// InboxRoles lists the roles that see a document in phase.
func (d *Definition) InboxRoles(phase string) []string {
	s, _ := d.step(phase)
	return s.InboxRoles
}

// PhasesSeenBy lists the non-terminal phases whose inbox roles meet roles.
func (d *Definition) PhasesSeenBy(roles []string) []string {
	var out []string
	for _, s := range d.Steps {
		if !s.Terminal && intersects(s.InboxRoles, roles) {
			out = append(out, s.Phase)
		}
	}
	return out
}

// NonTerminalPhases lists the phases documents can still move from.
func (d *Definition) NonTerminalPhases() []string {
	var out []string
	for _, s := range d.Steps {
		if !s.Terminal {
			out = append(out, s.Phase)
		}
	}
	return out
}

func intersects(a, b []string) bool {
	return slices.ContainsFunc(a, func(x string) bool { return slices.Contains(b, x) })
}

// holds evaluates a guard against facts; an empty guard always holds.
func holds(guard string, facts Facts) bool {
	if guard == "" {
		return true
	}
	if name, neg := strings.CutPrefix(guard, "!"); neg {
		return !facts[name]
	}
	return facts[guard]
}

func (a Actor) may(t Transition) bool {
	return a.System || a.Admin || intersects(t.Roles, a.Roles)
}

// Move checks a requested move: a pair outside the definition (or whose
// guard does not hold) is a 409 invalid_transition, for Admin too; a caller
// without an allowed role is a 403 transition_forbidden.
//
// A definition may list one pair more than once (say, under different
// guards or for different roles); the first listing that exists under facts
// and admits actor wins, so a later listing is never hidden by an earlier one.
func (d *Definition) Move(from, to string, actor Actor, facts Facts) (Transition, error) {
	var refused error
	for _, t := range d.Transitions {
		if t.From != from || t.To != to {
			continue
		}
		if !holds(t.Guard, facts) {
			if refused == nil {
				refused = noSuchMove(fmt.Sprintf("The move from %s to %s needs %s.", from, to, t.Guard))
			}
			continue
		}
		if !actor.may(t) {
			forbidden := apperr.New(apperr.KindForbidden, "transition_forbidden",
				fmt.Sprintf("The move from %s to %s is for %s.", from, to, strings.Join(t.Roles, ", ")))
			forbidden.Err = ErrMoveForbidden
			refused = forbidden
			continue
		}
		return t, nil
	}
	if refused != nil {
		return Transition{}, refused
	}
	return Transition{}, noSuchMove(fmt.Sprintf("There is no move from %s to %s.", from, to))
}

// NormalMove is the step's default move under facts: a guarded normal move
// whose guard holds wins over the unguarded one.
func (d *Definition) NormalMove(from string, facts Facts) (Transition, bool) {
	var plain *Transition
	for i, t := range d.Transitions {
		if t.From != from || !t.Normal || !holds(t.Guard, facts) {
			continue
		}
		if t.Guard != "" {
			return t, true
		}
		if plain == nil {
			plain = &d.Transitions[i]
		}
	}
	if plain == nil {
		return Transition{}, false
	}
	return *plain, true
}

// Allowed lists the moves actor may make from phase under facts.
func (d *Definition) Allowed(from string, actor Actor, facts Facts) []Transition {
	out := []Transition{}
	for _, t := range d.Transitions {
		if t.From == from && holds(t.Guard, facts) && actor.may(t) {
			out = append(out, t)
		}
	}
	return out
}

// Kind is a document kind that moves on workflows ("contract",
// "purchaseEvaluation"), registered by the module that owns the documents.
type Kind struct {
	Name          string
	Phases        []string // the phase set definitions of this kind may use
	DocumentTypes []string // what assignments map (e.g. each contract type)
	Defaults      []Default
	Facts         []string // the boolean facts guards may read
	Preconditions []string // the preconditions moves may name
}

// Default is a definition seeded as version 1 and assigned to document
// types that have no assignment yet.
type Default struct {
	Spec     Spec
	AssignTo []string
}
