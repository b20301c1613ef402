package engine_test

import (
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
)

func TestValidateAcceptsContractDefault(t *testing.T) {
	if problems := engine.Validate(designSpec(), contractPhases); len(problems) > 0 {
		t.Fatalf("contract-default v1 rejected: %v", problems)
	}
}

// TestValidateRejects breaks one rule of DESIGN §4 at a time and expects
// the problem that names it.
func TestValidateRejects(t *testing.T) {
	step := func(s *engine.Spec, phase string) *engine.Step {
		for i := range s.Steps {
			if s.Steps[i].Phase == phase {
				return &s.Steps[i]
			}
		}
		t.Fatalf("no step %s", phase)
		return nil
	}
	move := func(s *engine.Spec, from, to string) *engine.Transition {
		for i := range s.Transitions {
			if s.Transitions[i].From == from && s.Transitions[i].To == to {
				return &s.Transitions[i]
			}
		}
		t.Fatalf("no move %s→%s", from, to)
		return nil
	}
	without := func(s *engine.Spec, from, to string) {
		for i, tr := range s.Transitions {
			if tr.From == from && tr.To == to {
				s.Transitions = append(s.Transitions[:i], s.Transitions[i+1:]...)
				return
			}
		}
		t.Fatalf("no move %s→%s", from, to)
	}
	tests := []struct {
		name   string
		change func(s *engine.Spec)
		want   string
	}{
		{"unknown phase", func(s *engine.Spec) {
			s.Steps = append(s.Steps, engine.Step{Phase: "DangNgu", SLAHours: 5})
			s.Transitions = append(s.Transitions, engine.Transition{From: "DangDongDau", To: "DangNgu", Kind: engine.Forward, Roles: []string{"HrAdmin"}},
				engine.Transition{From: "DangNgu", To: "DaPhatHanh", Kind: engine.Forward, Roles: []string{"HrAdmin"}, Normal: true})
		}, "step DangNgu: not a phase of this document kind"},
		{"step listed twice", func(s *engine.Spec) {
			s.Steps = append(s.Steps, engine.Step{Phase: "DangGopY", SLAHours: 5})
		}, "step DangGopY: listed twice"},
		{"unreachable step", func(s *engine.Spec) { without(s, "DangTrinhKy", "TuChoi") },
			"step TuChoi: not reachable from the initial phase"},
		{"no terminal reachable", func(s *engine.Spec) {
			// DangDongDau can only loop on itself.
			without(s, "DangDongDau", "DaPhatHanh")
			s.Transitions = append(s.Transitions, engine.Transition{From: "DangDongDau", To: "DangDongDau", Kind: engine.Forward, Roles: []string{"HrAdmin"}, Normal: true})
		}, "step DangDongDau: no terminal step can be reached from it"},
		{"no normal move", func(s *engine.Spec) { move(s, "DangGopY", "DangInKy").Normal = false },
			"step DangGopY: needs exactly one unguarded normal move, has 0"},
		{"only a guarded normal move", func(s *engine.Spec) { move(s, "DangInKy", "DangKiemTraCCM").Normal = false },
			"step DangInKy: needs exactly one unguarded normal move, has 0"},
		{"two unguarded normal moves", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "" },
			"step DangInKy: needs exactly one unguarded normal move, has 2"},
		{"two normal moves out of a return step", func(s *engine.Spec) { move(s, "DangDamPhan", "DangSoanThao").Normal = true },
			"step DangDamPhan: needs exactly one unguarded normal move, has 2"},
		{"move without roles", func(s *engine.Spec) { move(s, "DangKiemTraCCM", "DangInKy").Roles = nil },
			"(DangKiemTraCCM → DangInKy): needs at least one role"},
		{"move with an empty role list", func(s *engine.Spec) { move(s, "DangTrinhKy", "TuChoi").Roles = []string{} },
			"(DangTrinhKy → TuChoi): needs at least one role"},
		{"zero SLA", func(s *engine.Spec) { step(s, "DangGopY").SLAHours = 0 }, "step DangGopY: SLA hours must be above zero"},
		{"negative SLA", func(s *engine.Spec) { step(s, "DangDongDau").SLAHours = -24 }, "step DangDongDau: SLA hours must be above zero"},
		{"guard with a space", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "bypass flag" }, "guard must be a fact name"},
		{"guard negated twice", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "!!bypass" }, "guard must be a fact name"},
		{"guard starting with a digit", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "1bypass" }, "guard must be a fact name"},
		{"guard expression", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "value>100" }, "guard must be a fact name"},
		{"unknown kind", func(s *engine.Spec) { move(s, "DangTrinhKy", "TuChoi").Kind = "sideways" }, "kind must be forward, return, reject or bypass"},
		{"move to a missing step", func(s *engine.Spec) {
			s.Transitions = append(s.Transitions, engine.Transition{From: "DangGopY", To: "Nowhere", Kind: engine.Forward, Roles: []string{"Finance"}})
		}, "(DangGopY → Nowhere): both ends must be steps"},
		{"move out of a terminal step", func(s *engine.Spec) {
			s.Transitions = append(s.Transitions, engine.Transition{From: "TuChoi", To: "DangSoanThao", Kind: engine.Return, Roles: []string{"Drafter"}})
		}, "(TuChoi → DangSoanThao): a terminal step has no moves"},
		{"terminal initial phase", func(s *engine.Spec) { s.InitialPhase = "DaPhatHanh" }, `initial phase "DaPhatHanh": must be a non-terminal step`},
		{"unknown initial phase", func(s *engine.Spec) { s.InitialPhase = "" }, `initial phase "": must be a non-terminal step`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := designSpec()
			tc.change(&spec)
			problems := engine.Validate(spec, contractPhases)
			for _, p := range problems {
				if strings.Contains(p, tc.want) {
					return
				}
			}
			t.Fatalf("problems %q lack %q", problems, tc.want)
		})
	}
}

// TestValidateUntouchedSpec: Validate does not change what it checks.
func TestValidateUntouchedSpec(t *testing.T) {
	spec := designSpec()
	_ = engine.Validate(spec, contractPhases)
	if len(spec.Transitions) != 12 || len(spec.Steps) != 9 {
		t.Fatalf("spec changed: %d steps, %d moves", len(spec.Steps), len(spec.Transitions))
	}
}
