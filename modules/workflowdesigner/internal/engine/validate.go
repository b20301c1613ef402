package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Problem codes of Validate. They are part of the API (the designer's
// validate and publish answers carry them), so they never change meaning.
const (
	ProblemNoName              = "no_name"              // the definition has no name
	ProblemUnknownPhase        = "unknown_phase"        // a step names a phase outside the kind's set
	ProblemDuplicateStep       = "duplicate_step"       // a phase has two steps
	ProblemBadInitialPhase     = "bad_initial_phase"    // the initial phase is no step, or a terminal one
	ProblemBadSLA              = "bad_sla"              // a non-terminal step's SLA hours are ≤ 0 or above MaxSLAHours
	ProblemBadBreachPolicy     = "bad_breach_policy"    // onSlaBreach is neither advance nor remind
	ProblemUnknownRole         = "unknown_role"         // an inbox or move role that does not exist
	ProblemUnknownStep         = "unknown_step"         // a move from or to a phase that has no step
	ProblemTerminalHasMoves    = "terminal_has_moves"   // a move out of a terminal step
	ProblemDuplicateMove       = "duplicate_move"       // two moves with the same from, to and guard
	ProblemNoRoles             = "no_roles"             // a move nobody may make
	ProblemBadKind             = "bad_kind"             // a move kind other than forward, return, reject, bypass
	ProblemBadGuard            = "bad_guard"            // a guard that is not "fact" or "!fact"
	ProblemUnknownFact         = "unknown_fact"         // a guard reading a fact the kind does not declare
	ProblemUnknownPrecondition = "unknown_precondition" // a precondition the kind does not declare
	ProblemNormalMoves         = "normal_moves"         // a non-terminal step without exactly one unguarded normal move
	ProblemUnreachable         = "unreachable"          // a step the initial one cannot reach
	ProblemNoTerminal          = "no_terminal"          // a step from which no terminal step can be reached
)

// MaxSLAHours bounds a step's SLA: a year. More is a typo, not a deadline.
const MaxSLAHours = 8760

// Problem is one thing wrong with a definition, with the step (Phase) or
// move (From, To) it concerns when there is one.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Phase   string `json:"phase,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	// Field is the property of the definition to change: Name,
	// InitialPhase, Steps or Transitions.
	Field string `json:"-"`
}

// The properties of a definition problems are found in.
const (
	FieldName         = "Name"
	FieldInitialPhase = "InitialPhase"
	FieldSteps        = "Steps"
	FieldTransitions  = "Transitions"
)

// Problems is what Validate found, in the order of the definition.
type Problems []Problem

// String joins the messages, for logs and start-up errors.
func (ps Problems) String() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "; ")
}

// Has reports whether a problem of code is among ps.
func (ps Problems) Has(code string) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Code == code })
}

var guardPattern = regexp.MustCompile(`^!?[a-zA-Z][a-zA-Z0-9]*$`)

// Validate lists what is wrong with spec as a definition of kind, whose
// moves may name roles (DESIGN §4 and §4.1): phases from the kind's set,
// each once; a non-terminal initial step; every step reachable from it; a
// terminal step reachable from every step; exactly one unguarded normal move
// per non-terminal step; at least one existing role per move; SLA hours
// above zero and at most MaxSLAHours on non-terminal steps; moves between
// steps, none out of a terminal one, none twice; guards and preconditions
// the kind declares. An empty result means the spec may be published.
func Validate(spec Spec, kind Kind, roles []string) Problems {
	var problems Problems
	add := func(p Problem, format string, args ...any) {
		p.Message = fmt.Sprintf(format, args...)
		problems = append(problems, p)
	}
	if strings.TrimSpace(spec.Name) == "" {
		add(Problem{Code: ProblemNoName, Field: FieldName}, "the definition needs a name")
	}

	steps := map[string]Step{}
	var order []string // each phase once, in the order of the steps
	for _, s := range spec.Steps {
		at := Problem{Phase: s.Phase, Field: FieldSteps}
		if !slices.Contains(kind.Phases, s.Phase) {
			add(with(at, ProblemUnknownPhase), "step %s: not a phase of this document kind", s.Phase)
		}
		if _, dup := steps[s.Phase]; dup {
			add(with(at, ProblemDuplicateStep), "step %s: listed twice", s.Phase)
		} else {
			steps[s.Phase] = s
			order = append(order, s.Phase)
		}
		if !s.Terminal && s.SLAHours <= 0 {
			add(with(at, ProblemBadSLA), "step %s: SLA hours must be above zero", s.Phase)
		}
		if !s.Terminal && s.SLAHours > MaxSLAHours {
			add(with(at, ProblemBadSLA), "step %s: SLA hours must be at most %d (a year)", s.Phase, MaxSLAHours)
		}
		if b := s.OnSLABreach; b != "" && b != BreachAdvance && b != BreachRemind {
			add(with(at, ProblemBadBreachPolicy), "step %s: onSlaBreach must be %s or %s, not %q", s.Phase, BreachAdvance, BreachRemind, b)
		}
		for _, r := range s.InboxRoles {
			if !slices.Contains(roles, r) {
				add(with(at, ProblemUnknownRole), "step %s: inbox role %q does not exist", s.Phase, r)
			}
		}
	}
	if s, ok := steps[spec.InitialPhase]; !ok || s.Terminal {
		add(Problem{Code: ProblemBadInitialPhase, Phase: spec.InitialPhase, Field: FieldInitialPhase}, "initial phase %q: must be a non-terminal step", spec.InitialPhase)
	}

	out := map[string][]string{}
	normals := map[string]int{}
	type moveKey struct{ from, to, guard string }
	seen := map[moveKey]int{}
	for i, t := range spec.Transitions {
		name := fmt.Sprintf("move %d (%s → %s)", i+1, t.From, t.To)
		at := Problem{From: t.From, To: t.To, Field: FieldTransitions}
		from, okFrom := steps[t.From]
		if _, okTo := steps[t.To]; !okFrom || !okTo {
			add(with(at, ProblemUnknownStep), "%s: both ends must be steps", name)
		}
		if okFrom && from.Terminal {
			add(with(at, ProblemTerminalHasMoves), "%s: a terminal step has no moves", name)
		}
		k := moveKey{t.From, t.To, t.Guard}
		if first, dup := seen[k]; dup {
			add(with(at, ProblemDuplicateMove), "%s: the same move as move %d (same from, to and guard)", name, first)
		} else {
			seen[k] = i + 1
		}
		if len(t.Roles) == 0 {
			add(with(at, ProblemNoRoles), "%s: needs at least one role", name)
		}
		for _, r := range t.Roles {
			if !slices.Contains(roles, r) {
				add(with(at, ProblemUnknownRole), "%s: role %q does not exist", name, r)
			}
		}
		switch t.Kind {
		case Forward, Return, Reject, Bypass:
		default:
			add(with(at, ProblemBadKind), "%s: kind must be forward, return, reject or bypass", name)
		}
		if t.Guard != "" {
			if !guardPattern.MatchString(t.Guard) {
				add(with(at, ProblemBadGuard), "%s: guard must be a fact name, optionally negated with !", name)
			} else if fact := strings.TrimPrefix(t.Guard, "!"); !slices.Contains(kind.Facts, fact) {
				add(with(at, ProblemUnknownFact), "%s: guard reads %q, which is not a fact of this document kind%s", name, fact, declared(kind.Facts))
			}
		}
		if t.Precondition != "" && !slices.Contains(kind.Preconditions, t.Precondition) {
			add(with(at, ProblemUnknownPrecondition), "%s: precondition %q is not one this document kind declares%s", name, t.Precondition, declared(kind.Preconditions))
		}
		if t.Normal && t.Guard == "" {
			normals[t.From]++
		}
		out[t.From] = append(out[t.From], t.To)
	}

	for _, p := range order {
		if !steps[p].Terminal && normals[p] != 1 {
			add(Problem{Code: ProblemNormalMoves, Phase: p, Field: FieldTransitions}, "step %s: needs exactly one unguarded normal move, has %d", p, normals[p])
		}
	}
	reach := reachable([]string{spec.InitialPhase}, out)
	// The steps a terminal step can be reached from are those reachable
	// from the terminal steps against the direction of the moves.
	in := map[string][]string{}
	var terminals []string
	for from, tos := range out {
		for _, to := range tos {
			in[to] = append(in[to], from)
		}
	}
	for _, p := range order {
		if steps[p].Terminal {
			terminals = append(terminals, p)
		}
	}
	finishes := reachable(terminals, in)
	for _, p := range order {
		if !reach[p] {
			add(Problem{Code: ProblemUnreachable, Phase: p, Field: FieldTransitions}, "step %s: not reachable from the initial phase", p)
		}
		if !steps[p].Terminal && !finishes[p] {
			add(Problem{Code: ProblemNoTerminal, Phase: p, Field: FieldTransitions}, "step %s: no terminal step can be reached from it", p)
		}
	}
	return problems
}

func with(p Problem, code string) Problem {
	p.Code = code
	return p
}

// declared lists what a kind declares, for a message that says what to use.
func declared(names []string) string {
	if len(names) == 0 {
		return " (it declares none)"
	}
	return " (it declares " + strings.Join(names, ", ") + ")"
}

// reachable is the set of phases reachable from start along edges.
func reachable(start []string, edges map[string][]string) map[string]bool {
	seen := map[string]bool{}
	queue := []string{}
	for _, p := range start {
		if !seen[p] {
			seen[p] = true
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, n := range edges[p] {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	return seen
}
