package engine

import (
	"fmt"
	"regexp"
	"slices"
)

var guardPattern = regexp.MustCompile(`^!?[a-zA-Z][a-zA-Z0-9]*$`)

// Validate lists what is wrong with spec for a document kind whose phases
// are phases (DESIGN §4): phases from the set, each once; a non-terminal
// initial step; every step reachable from it; a terminal step reachable from
// every step; exactly one unguarded normal move per non-terminal step; at
// least one role per move; SLA hours above zero on non-terminal steps.
func Validate(spec Spec, phases []string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	steps := map[string]Step{}
	for _, s := range spec.Steps {
		if !slices.Contains(phases, s.Phase) {
			bad("step %s: not a phase of this document kind", s.Phase)
		}
		if _, dup := steps[s.Phase]; dup {
			bad("step %s: listed twice", s.Phase)
		}
		steps[s.Phase] = s
		if !s.Terminal && s.SLAHours <= 0 {
			bad("step %s: SLA hours must be above zero", s.Phase)
		}
	}
	if s, ok := steps[spec.InitialPhase]; !ok || s.Terminal {
		bad("initial phase %q: must be a non-terminal step", spec.InitialPhase)
	}
	out := map[string][]string{}
	normals := map[string]int{}
	for i, t := range spec.Transitions {
		name := fmt.Sprintf("move %d (%s → %s)", i+1, t.From, t.To)
		from, okFrom := steps[t.From]
		if _, okTo := steps[t.To]; !okFrom || !okTo {
			bad("%s: both ends must be steps", name)
		}
		if okFrom && from.Terminal {
			bad("%s: a terminal step has no moves", name)
		}
		if len(t.Roles) == 0 {
			bad("%s: needs at least one role", name)
		}
		switch t.Kind {
		case Forward, Return, Reject, Bypass:
		default:
			bad("%s: kind must be forward, return, reject or bypass", name)
		}
		if t.Guard != "" && !guardPattern.MatchString(t.Guard) {
			bad("%s: guard must be a fact name, optionally negated with !", name)
		}
		if t.Normal && t.Guard == "" {
			normals[t.From]++
		}
		out[t.From] = append(out[t.From], t.To)
	}
	for _, s := range spec.Steps {
		if !s.Terminal && normals[s.Phase] != 1 {
			bad("step %s: needs exactly one unguarded normal move, has %d", s.Phase, normals[s.Phase])
		}
	}
	reach := reachable(spec.InitialPhase, out)
	for _, s := range spec.Steps {
		if !reach[s.Phase] {
			bad("step %s: not reachable from the initial phase", s.Phase)
		}
		if !s.Terminal && !reachesTerminal(s.Phase, out, steps) {
			bad("step %s: no terminal step can be reached from it", s.Phase)
		}
	}
	return problems
}

func reachable(start string, out map[string][]string) map[string]bool {
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, n := range out[p] {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	return seen
}

func reachesTerminal(from string, out map[string][]string, steps map[string]Step) bool {
	for p := range reachable(from, out) {
		if steps[p].Terminal {
			return true
		}
	}
	return false
}
