package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
)

// allRoles are DESIGN §2's twelve roles, written out here.
var allRoles = append([]string{"Admin"}, nonAdminRoles...)

// contractKind declares the contract phases, the bypass fact and one
// precondition, as the contracts module might.
var contractKind = engine.Kind{Name: "contract", Phases: contractPhases, Facts: []string{bypassFact},
	Preconditions: []string{"opinionsComplete"}}

func TestValidateAcceptsContractDefault(t *testing.T) {
	if problems := engine.Validate(designSpec(), contractKind, allRoles); len(problems) > 0 {
		t.Fatalf("contract-default v1 rejected: %v", problems)
	}
}

// TestValidateAcceptsExtensions: a remind policy, a declared precondition,
// a negated declared guard, a year of SLA and the empty policy (advance)
// are all fine.
func TestValidateAcceptsExtensions(t *testing.T) {
	spec := designSpec()
	spec.Steps[0].OnSLABreach = engine.BreachRemind
	spec.Steps[1].OnSLABreach = engine.BreachAdvance
	spec.Steps[2].SLAHours = engine.MaxSLAHours
	spec.Transitions[0].Precondition = "opinionsComplete"
	spec.Transitions = append(spec.Transitions, engine.Transition{From: "DangInKy", To: "DangTrinhKy", Kind: engine.Bypass,
		Roles: []string{"Admin"}, Guard: "!" + bypassFact})
	if problems := engine.Validate(spec, contractKind, allRoles); len(problems) > 0 {
		t.Fatalf("rejected: %v", problems)
	}
}

// TestValidateRejects breaks one rule at a time and expects the problem
// that names it: its code, the step or move it concerns, and words of its
// message.
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
	atStep := func(p string) engine.Problem { return engine.Problem{Phase: p} }
	atMove := func(from, to string) engine.Problem { return engine.Problem{From: from, To: to} }
	tests := []struct {
		name   string
		change func(s *engine.Spec)
		code   string
		at     engine.Problem
		want   string
	}{
		{"no name", func(s *engine.Spec) { s.Name = "  " }, engine.ProblemNoName, engine.Problem{}, "needs a name"},
		{"unknown phase", func(s *engine.Spec) {
			s.Steps = append(s.Steps, engine.Step{Phase: "DangNgu", SLAHours: 5})
			s.Transitions = append(s.Transitions, engine.Transition{From: "DangDongDau", To: "DangNgu", Kind: engine.Forward, Roles: []string{"HrAdmin"}},
				engine.Transition{From: "DangNgu", To: "DaPhatHanh", Kind: engine.Forward, Roles: []string{"HrAdmin"}, Normal: true})
		}, engine.ProblemUnknownPhase, atStep("DangNgu"), "step DangNgu: not a phase of this document kind"},
		{"step listed twice", func(s *engine.Spec) {
			s.Steps = append(s.Steps, engine.Step{Phase: "DangGopY", SLAHours: 5})
		}, engine.ProblemDuplicateStep, atStep("DangGopY"), "step DangGopY: listed twice"},
		{"unreachable step", func(s *engine.Spec) { without(s, "DangTrinhKy", "TuChoi") },
			engine.ProblemUnreachable, atStep("TuChoi"), "step TuChoi: not reachable from the initial phase"},
		{"no terminal reachable", func(s *engine.Spec) {
			// DangDongDau can only loop on itself.
			without(s, "DangDongDau", "DaPhatHanh")
			s.Transitions = append(s.Transitions, engine.Transition{From: "DangDongDau", To: "DangDongDau", Kind: engine.Forward, Roles: []string{"HrAdmin"}, Normal: true})
		}, engine.ProblemNoTerminal, atStep("DangDongDau"), "step DangDongDau: no terminal step can be reached from it"},
		{"no terminal step at all", func(s *engine.Spec) { step(s, "TuChoi").Terminal = false; step(s, "TuChoi").SLAHours = 1 },
			engine.ProblemNoTerminal, atStep("TuChoi"), "no terminal step can be reached"},
		{"no normal move", func(s *engine.Spec) { move(s, "DangGopY", "DangInKy").Normal = false },
			engine.ProblemNormalMoves, atStep("DangGopY"), "step DangGopY: needs exactly one unguarded normal move, has 0"},
		{"only a guarded normal move", func(s *engine.Spec) { move(s, "DangInKy", "DangKiemTraCCM").Normal = false },
			engine.ProblemNormalMoves, atStep("DangInKy"), "step DangInKy: needs exactly one unguarded normal move, has 0"},
		{"two unguarded normal moves", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "" },
			engine.ProblemNormalMoves, atStep("DangInKy"), "step DangInKy: needs exactly one unguarded normal move, has 2"},
		{"two normal moves out of a return step", func(s *engine.Spec) { move(s, "DangDamPhan", "DangSoanThao").Normal = true },
			engine.ProblemNormalMoves, atStep("DangDamPhan"), "step DangDamPhan: needs exactly one unguarded normal move, has 2"},
		{"move without roles", func(s *engine.Spec) { move(s, "DangKiemTraCCM", "DangInKy").Roles = nil },
			engine.ProblemNoRoles, atMove("DangKiemTraCCM", "DangInKy"), "(DangKiemTraCCM → DangInKy): needs at least one role"},
		{"move with an empty role list", func(s *engine.Spec) { move(s, "DangTrinhKy", "TuChoi").Roles = []string{} },
			engine.ProblemNoRoles, atMove("DangTrinhKy", "TuChoi"), "(DangTrinhKy → TuChoi): needs at least one role"},
		{"move role that does not exist", func(s *engine.Spec) { move(s, "DangGopY", "DangInKy").Roles = []string{"ProjectManager", "Janitor"} },
			engine.ProblemUnknownRole, atMove("DangGopY", "DangInKy"), `role "Janitor" does not exist`},
		{"role names are case-sensitive", func(s *engine.Spec) { move(s, "DangGopY", "DangInKy").Roles = []string{"projectmanager"} },
			engine.ProblemUnknownRole, atMove("DangGopY", "DangInKy"), `role "projectmanager" does not exist`},
		{"inbox role that does not exist", func(s *engine.Spec) { step(s, "DangGopY").InboxRoles = []string{"Finance", "Janitor"} },
			engine.ProblemUnknownRole, atStep("DangGopY"), `step DangGopY: inbox role "Janitor" does not exist`},
		{"zero SLA", func(s *engine.Spec) { step(s, "DangGopY").SLAHours = 0 },
			engine.ProblemBadSLA, atStep("DangGopY"), "step DangGopY: SLA hours must be above zero"},
		{"negative SLA", func(s *engine.Spec) { step(s, "DangDongDau").SLAHours = -24 },
			engine.ProblemBadSLA, atStep("DangDongDau"), "step DangDongDau: SLA hours must be above zero"},
		{"absurd SLA", func(s *engine.Spec) { step(s, "DangDongDau").SLAHours = engine.MaxSLAHours + 1 },
			engine.ProblemBadSLA, atStep("DangDongDau"), "step DangDongDau: SLA hours must be at most 8760"},
		{"unknown breach policy", func(s *engine.Spec) { step(s, "DangGopY").OnSLABreach = "escalate" },
			engine.ProblemBadBreachPolicy, atStep("DangGopY"), `onSlaBreach must be advance or remind, not "escalate"`},
		{"guard with a space", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "bypass flag" },
			engine.ProblemBadGuard, atMove("DangInKy", "DangTrinhKy"), "guard must be a fact name"},
		{"guard negated twice", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "!!bypass" },
			engine.ProblemBadGuard, atMove("DangInKy", "DangTrinhKy"), "guard must be a fact name"},
		{"guard starting with a digit", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "1bypass" },
			engine.ProblemBadGuard, atMove("DangInKy", "DangTrinhKy"), "guard must be a fact name"},
		{"guard expression", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "value>100" },
			engine.ProblemBadGuard, atMove("DangInKy", "DangTrinhKy"), "guard must be a fact name"},
		{"guard on an undeclared fact", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "urgent" },
			engine.ProblemUnknownFact, atMove("DangInKy", "DangTrinhKy"), `guard reads "urgent", which is not a fact of this document kind (it declares bypassProcurementAndCCM)`},
		{"negated guard on an undeclared fact", func(s *engine.Spec) { move(s, "DangInKy", "DangTrinhKy").Guard = "!urgent" },
			engine.ProblemUnknownFact, atMove("DangInKy", "DangTrinhKy"), `guard reads "urgent"`},
		{"undeclared precondition", func(s *engine.Spec) { move(s, "DangGopY", "DangInKy").Precondition = "budgetOk" },
			engine.ProblemUnknownPrecondition, atMove("DangGopY", "DangInKy"), `precondition "budgetOk" is not one this document kind declares (it declares opinionsComplete)`},
		{"unknown kind", func(s *engine.Spec) { move(s, "DangTrinhKy", "TuChoi").Kind = "sideways" },
			engine.ProblemBadKind, atMove("DangTrinhKy", "TuChoi"), "kind must be forward, return, reject or bypass"},
		{"empty kind", func(s *engine.Spec) { move(s, "DangTrinhKy", "TuChoi").Kind = "" },
			engine.ProblemBadKind, atMove("DangTrinhKy", "TuChoi"), "kind must be forward, return, reject or bypass"},
		{"move to a missing step", func(s *engine.Spec) {
			s.Transitions = append(s.Transitions, engine.Transition{From: "DangGopY", To: "Nowhere", Kind: engine.Forward, Roles: []string{"Finance"}})
		}, engine.ProblemUnknownStep, atMove("DangGopY", "Nowhere"), "(DangGopY → Nowhere): both ends must be steps"},
		{"move from a missing step", func(s *engine.Spec) {
			s.Transitions = append(s.Transitions, engine.Transition{From: "Nowhere", To: "DangGopY", Kind: engine.Forward, Roles: []string{"Finance"}})
		}, engine.ProblemUnknownStep, atMove("Nowhere", "DangGopY"), "(Nowhere → DangGopY): both ends must be steps"},
		{"move out of a terminal step", func(s *engine.Spec) {
			s.Transitions = append(s.Transitions, engine.Transition{From: "TuChoi", To: "DangSoanThao", Kind: engine.Return, Roles: []string{"Drafter"}})
		}, engine.ProblemTerminalHasMoves, atMove("TuChoi", "DangSoanThao"), "(TuChoi → DangSoanThao): a terminal step has no moves"},
		{"duplicate move", func(s *engine.Spec) {
			s.Transitions = append(s.Transitions, engine.Transition{From: "DangGopY", To: "DangDamPhan", Kind: engine.Return, Roles: []string{"Finance"}})
		}, engine.ProblemDuplicateMove, atMove("DangGopY", "DangDamPhan"), "move 13 (DangGopY → DangDamPhan): the same move as move 10"},
		{"duplicate guarded move", func(s *engine.Spec) {
			s.Transitions = append(s.Transitions, engine.Transition{From: "DangInKy", To: "DangTrinhKy", Kind: engine.Bypass, Roles: []string{"Admin"}, Guard: bypassFact})
		}, engine.ProblemDuplicateMove, atMove("DangInKy", "DangTrinhKy"), "the same move as move 8"},
		{"terminal initial phase", func(s *engine.Spec) { s.InitialPhase = "DaPhatHanh" },
			engine.ProblemBadInitialPhase, atStep("DaPhatHanh"), `initial phase "DaPhatHanh": must be a non-terminal step`},
		{"missing initial phase", func(s *engine.Spec) { s.InitialPhase = "" },
			engine.ProblemBadInitialPhase, atStep(""), `initial phase "": must be a non-terminal step`},
		{"initial phase without a step", func(s *engine.Spec) { s.InitialPhase = "DangNgu" },
			engine.ProblemBadInitialPhase, atStep("DangNgu"), `initial phase "DangNgu": must be a non-terminal step`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := designSpec()
			tc.change(&spec)
			problems := engine.Validate(spec, contractKind, allRoles)
			for _, p := range problems {
				switch p.Field {
				case engine.FieldName, engine.FieldInitialPhase, engine.FieldSteps, engine.FieldTransitions:
				default:
					t.Errorf("problem %+v names no property of the definition", p)
				}
			}
			for _, p := range problems {
				if p.Code == tc.code && p.Phase == tc.at.Phase && p.From == tc.at.From && p.To == tc.at.To && strings.Contains(p.Message, tc.want) {
					return
				}
			}
			t.Fatalf("problems %+v lack %s at %+v saying %q", problems, tc.code, tc.at, tc.want)
		})
	}
}

// TestValidateEmptyDefinition: a blank draft reports what it lacks, and
// nothing about steps it does not have.
func TestValidateEmptyDefinition(t *testing.T) {
	problems := engine.Validate(engine.Spec{}, contractKind, allRoles)
	var codes []string
	for _, p := range problems {
		codes = append(codes, p.Code)
	}
	if want := []string{engine.ProblemNoName, engine.ProblemBadInitialPhase}; !slices.Equal(codes, want) {
		t.Fatalf("codes %v, want %v", codes, want)
	}
	if !problems.Has(engine.ProblemNoName) || problems.Has(engine.ProblemUnreachable) {
		t.Error("Has disagrees with the list")
	}
	if s := problems.String(); s != "the definition needs a name; initial phase \"\": must be a non-terminal step" {
		t.Errorf("String() = %q", s)
	}
}

// TestValidateUnknownKind: against a kind with no phases, facts or
// preconditions (one no longer registered), every step and guard is
// reported rather than passed.
func TestValidateUnknownKind(t *testing.T) {
	problems := engine.Validate(designSpec(), engine.Kind{Name: "gone"}, allRoles)
	n := 0
	for _, p := range problems {
		if p.Code == engine.ProblemUnknownPhase {
			n++
		}
	}
	if n != 9 || !problems.Has(engine.ProblemUnknownFact) {
		t.Fatalf("%d unknown phases in %v", n, problems)
	}
}

// TestValidateUntouchedSpec: Validate does not change what it checks.
func TestValidateUntouchedSpec(t *testing.T) {
	spec := designSpec()
	_ = engine.Validate(spec, contractKind, allRoles)
	if len(spec.Transitions) != 12 || len(spec.Steps) != 9 {
		t.Fatalf("spec changed: %d steps, %d moves", len(spec.Steps), len(spec.Transitions))
	}
}
