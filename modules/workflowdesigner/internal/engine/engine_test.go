package engine_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/apperr"
)

// The contract phases and roles, written out from the specification rather
// than taken from the contracts module, so these tests check the engine
// against DESIGN §4 and not against itself.
var (
	contractPhases = []string{"DangSoanThao", "DangDamPhan", "DangGopY", "DangKiemTraCCM", "DangInKy", "DangTrinhKy",
		"DangDongDau", "DaPhatHanh", "TuChoi"}
	nonAdminRoles = []string{"Drafter", "DeptManager", "ProjectManager", "Procurement", "CostControl", "Finance",
		"Accounting", "Equipment", "Director", "AuthorizedSigner", "HrAdmin"}
)

const bypassFact = "bypassProcurementAndCCM"

// pair is one row of DESIGN §4's adjacency table.
type pair struct {
	n        int
	from, to string
	kind     engine.MoveKind
	roles    []string
	normal   bool
	guard    string
}

var designPairs = []pair{
	{1, "DangSoanThao", "DangDamPhan", engine.Forward, []string{"Drafter", "DeptManager"}, true, ""},
	{2, "DangDamPhan", "DangGopY", engine.Forward, []string{"Drafter", "DeptManager"}, true, ""},
	{3, "DangGopY", "DangInKy", engine.Forward, []string{"ProjectManager"}, true, ""},
	{4, "DangInKy", "DangKiemTraCCM", engine.Forward, []string{"Drafter", "DeptManager"}, true, ""},
	{5, "DangKiemTraCCM", "DangTrinhKy", engine.Forward, []string{"CostControl"}, true, ""},
	{6, "DangTrinhKy", "DangDongDau", engine.Forward, []string{"Director", "AuthorizedSigner"}, true, ""},
	{7, "DangDongDau", "DaPhatHanh", engine.Forward, []string{"HrAdmin"}, true, ""},
	{8, "DangInKy", "DangTrinhKy", engine.Bypass, []string{"Drafter", "DeptManager"}, true, bypassFact},
	{9, "DangDamPhan", "DangSoanThao", engine.Return, []string{"Drafter", "DeptManager"}, false, ""},
	{10, "DangGopY", "DangDamPhan", engine.Return, []string{"ProjectManager"}, false, ""},
	{11, "DangKiemTraCCM", "DangInKy", engine.Return, []string{"CostControl"}, false, ""},
	{12, "DangTrinhKy", "TuChoi", engine.Reject, []string{"Director", "AuthorizedSigner"}, false, ""},
}

// designSpec is contract-default v1 as DESIGN §4 and seed §3.1 state it.
func designSpec() engine.Spec {
	drafters := []string{"Drafter", "DeptManager"}
	spec := engine.Spec{Key: "contract-default", Name: "Default contract approval", InitialPhase: "DangSoanThao",
		Steps: []engine.Step{
			{Phase: "DangSoanThao", SLAHours: 168, InboxRoles: drafters},
			{Phase: "DangDamPhan", SLAHours: 120, InboxRoles: drafters},
			{Phase: "DangGopY", SLAHours: 72, InboxRoles: []string{"ProjectManager", "Procurement", "CostControl", "Finance", "Accounting", "Equipment"}},
			{Phase: "DangInKy", SLAHours: 48, InboxRoles: drafters},
			{Phase: "DangKiemTraCCM", SLAHours: 48, InboxRoles: []string{"CostControl"}},
			{Phase: "DangTrinhKy", SLAHours: 72, InboxRoles: []string{"Director", "AuthorizedSigner"}},
			{Phase: "DangDongDau", SLAHours: 24, InboxRoles: []string{"HrAdmin"}},
			{Phase: "DaPhatHanh", Terminal: true},
			{Phase: "TuChoi", Terminal: true},
		}}
	for _, p := range designPairs {
		spec.Transitions = append(spec.Transitions, engine.Transition{From: p.from, To: p.to, Kind: p.kind,
			Roles: slices.Clone(p.roles), Normal: p.normal, Guard: p.guard})
	}
	return spec
}

func designDefinition() *engine.Definition {
	return &engine.Definition{ID: "def-1", Version: 1, DocumentKind: "contract", Published: true, Spec: designSpec()}
}

func findPair(from, to string) (pair, bool) {
	for _, p := range designPairs {
		if p.from == from && p.to == to {
			return p, true
		}
	}
	return pair{}, false
}

func wantErr(t *testing.T, err error, kind apperr.Kind, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if apperr.KindOf(err) != kind || apperr.CodeOf(err) != code {
		t.Fatalf("error %v (kind %d, code %q), want kind %d code %q", err, apperr.KindOf(err), apperr.CodeOf(err), kind, code)
	}
}

// TestMoveEveryPairAndRole runs each of the 12 pairs for every role alone,
// for Admin and for the system: the listed roles, Admin and the system pass;
// every other role gets 403 transition_forbidden.
func TestMoveEveryPairAndRole(t *testing.T) {
	d := designDefinition()
	for _, p := range designPairs {
		facts := engine.Facts{bypassFact: p.guard != ""}
		actors := map[string]engine.Actor{
			"Admin":  {Roles: []string{"Admin"}, Admin: true},
			"system": {System: true},
		}
		for _, r := range nonAdminRoles {
			actors[r] = engine.Actor{Roles: []string{r}}
		}
		for name, actor := range actors {
			allowed := name == "Admin" || name == "system" || slices.Contains(p.roles, name)
			t.Run(fmt.Sprintf("%02d %s→%s by %s", p.n, p.from, p.to, name), func(t *testing.T) {
				tr, err := d.Move(p.from, p.to, actor, facts)
				if !allowed {
					wantErr(t, err, apperr.KindForbidden, "transition_forbidden")
					return
				}
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tr.From != p.from || tr.To != p.to || tr.Kind != p.kind {
					t.Fatalf("got %+v", tr)
				}
			})
		}
	}
}

// TestMoveRolesAmongOthers: one allowed role among unrelated ones is enough.
func TestMoveRolesAmongOthers(t *testing.T) {
	d := designDefinition()
	if _, err := d.Move("DangGopY", "DangInKy", engine.Actor{Roles: []string{"Finance", "ProjectManager"}}, nil); err != nil {
		t.Fatalf("refused: %v", err)
	}
	_, err := d.Move("DangGopY", "DangInKy", engine.Actor{Roles: []string{"Finance", "Accounting", "Drafter"}}, nil)
	wantErr(t, err, apperr.KindForbidden, "transition_forbidden")
	_, err = d.Move("DangGopY", "DangInKy", engine.Actor{}, nil)
	wantErr(t, err, apperr.KindForbidden, "transition_forbidden")
}

// TestMoveOutsideThePairs: every (from, to) not among the 12 is a 409
// invalid_transition, for Admin and for the system too, before any role check.
func TestMoveOutsideThePairs(t *testing.T) {
	d := designDefinition()
	actors := map[string]engine.Actor{
		"Admin":   {Roles: []string{"Admin"}, Admin: true},
		"system":  {System: true},
		"nobody":  {},
		"Drafter": {Roles: []string{"Drafter"}},
	}
	count := 0
	for _, from := range append(contractPhases, "Unknown") {
		for _, to := range append(contractPhases, "Unknown", "") {
			if _, ok := findPair(from, to); ok {
				continue
			}
			count++
			for name, actor := range actors {
				for _, bypass := range []bool{false, true} {
					_, err := d.Move(from, to, actor, engine.Facts{bypassFact: bypass})
					if apperr.KindOf(err) != apperr.KindConflict || apperr.CodeOf(err) != "invalid_transition" {
						t.Errorf("%s→%s by %s (bypass %v): %v, want 409 invalid_transition", from, to, name, bypass, err)
					}
				}
			}
		}
	}
	if want := 10*11 - 12; count != want {
		t.Fatalf("checked %d pairs, want %d", count, want)
	}
}

// TestMoveGuard: the bypass move exists only while bypassProcurementAndCCM
// holds; without it even Admin and the system get 409 invalid_transition.
func TestMoveGuard(t *testing.T) {
	d := designDefinition()
	for name, actor := range map[string]engine.Actor{
		"Admin":   {Roles: []string{"Admin"}, Admin: true},
		"system":  {System: true},
		"Drafter": {Roles: []string{"Drafter"}},
	} {
		for _, facts := range []engine.Facts{nil, {}, {bypassFact: false}, {"somethingElse": true}} {
			_, err := d.Move("DangInKy", "DangTrinhKy", actor, facts)
			if apperr.CodeOf(err) != "invalid_transition" || apperr.KindOf(err) != apperr.KindConflict {
				t.Errorf("%s with %v: %v, want 409 invalid_transition", name, facts, err)
			}
		}
		tr, err := d.Move("DangInKy", "DangTrinhKy", actor, engine.Facts{bypassFact: true})
		if err != nil || tr.Kind != engine.Bypass {
			t.Errorf("%s with the bypass flag: %+v, %v", name, tr, err)
		}
		// The unguarded forward move stays available either way.
		for _, bypass := range []bool{false, true} {
			if _, err := d.Move("DangInKy", "DangKiemTraCCM", actor, engine.Facts{bypassFact: bypass}); err != nil {
				t.Errorf("%s DangInKy→DangKiemTraCCM (bypass %v): %v", name, bypass, err)
			}
		}
	}
	// A guard failing outranks a missing role: the move does not exist.
	_, err := d.Move("DangInKy", "DangTrinhKy", engine.Actor{Roles: []string{"HrAdmin"}}, nil)
	wantErr(t, err, apperr.KindConflict, "invalid_transition")
}

// TestNegatedGuard: "!fact" holds when the fact is false or missing.
func TestNegatedGuard(t *testing.T) {
	d := &engine.Definition{Spec: engine.Spec{InitialPhase: "A",
		Steps: []engine.Step{{Phase: "A", SLAHours: 1}, {Phase: "B", Terminal: true}, {Phase: "C", Terminal: true}},
		Transitions: []engine.Transition{
			{From: "A", To: "B", Kind: engine.Forward, Roles: []string{"X"}, Normal: true},
			{From: "A", To: "C", Kind: engine.Bypass, Roles: []string{"X"}, Normal: true, Guard: "!flag"},
		}}}
	for _, facts := range []engine.Facts{nil, {"flag": false}} {
		if _, err := d.Move("A", "C", engine.Actor{Roles: []string{"X"}}, facts); err != nil {
			t.Errorf("facts %v: %v", facts, err)
		}
		if tr, ok := d.NormalMove("A", facts); !ok || tr.To != "C" {
			t.Errorf("normal move with %v: %+v %v, want A→C", facts, tr, ok)
		}
	}
	_, err := d.Move("A", "C", engine.Actor{Roles: []string{"X"}}, engine.Facts{"flag": true})
	wantErr(t, err, apperr.KindConflict, "invalid_transition")
	if tr, ok := d.NormalMove("A", engine.Facts{"flag": true}); !ok || tr.To != "B" {
		t.Errorf("normal move with flag: %+v %v, want A→B", tr, ok)
	}
}

func TestDecisionAndComment(t *testing.T) {
	d := designDefinition()
	for _, p := range designPairs {
		tr, err := d.Move(p.from, p.to, engine.Actor{Admin: true}, engine.Facts{bypassFact: true})
		if err != nil {
			t.Fatal(err)
		}
		want := map[engine.MoveKind]string{engine.Forward: "Approve", engine.Bypass: "Approve", engine.Return: "Return", engine.Reject: "Reject"}[p.kind]
		if got := tr.Decision(false); got != want {
			t.Errorf("pair %d: decision %q, want %q", p.n, got, want)
		}
		if got := tr.Decision(true); got != "AutoApprove" {
			t.Errorf("pair %d: system decision %q, want AutoApprove", p.n, got)
		}
		if got, want := tr.RequiresComment(), p.kind == engine.Return || p.kind == engine.Reject; got != want {
			t.Errorf("pair %d: requires comment %v, want %v", p.n, got, want)
		}
	}
}

// TestNormalMove: the normal path of DESIGN §4, with the bypass move
// replacing DangInKy→DangKiemTraCCM only when its guard holds.
func TestNormalMove(t *testing.T) {
	d := designDefinition()
	tests := []struct {
		from   string
		bypass bool
		to     string
		kind   engine.MoveKind
	}{
		{"DangSoanThao", false, "DangDamPhan", engine.Forward},
		{"DangDamPhan", false, "DangGopY", engine.Forward},
		{"DangGopY", false, "DangInKy", engine.Forward},
		{"DangInKy", false, "DangKiemTraCCM", engine.Forward},
		{"DangInKy", true, "DangTrinhKy", engine.Bypass},
		{"DangKiemTraCCM", false, "DangTrinhKy", engine.Forward},
		{"DangKiemTraCCM", true, "DangTrinhKy", engine.Forward},
		{"DangTrinhKy", false, "DangDongDau", engine.Forward},
		{"DangDongDau", false, "DaPhatHanh", engine.Forward},
		{"DangDongDau", true, "DaPhatHanh", engine.Forward},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s bypass=%v", tc.from, tc.bypass), func(t *testing.T) {
			tr, ok := d.NormalMove(tc.from, engine.Facts{bypassFact: tc.bypass})
			if !ok || tr.To != tc.to || tr.Kind != tc.kind || !tr.Normal {
				t.Fatalf("got %+v %v, want →%s (%s)", tr, ok, tc.to, tc.kind)
			}
		})
	}
	for _, from := range []string{"DaPhatHanh", "TuChoi", "Unknown"} {
		if tr, ok := d.NormalMove(from, engine.Facts{bypassFact: true}); ok {
			t.Errorf("%s has normal move %+v", from, tr)
		}
	}
	// The full normal run is seven moves without bypass, six with it.
	for bypass, want := range map[bool]int{false: 7, true: 6} {
		phase, n := "DangSoanThao", 0
		for !d.Terminal(phase) {
			tr, ok := d.NormalMove(phase, engine.Facts{bypassFact: bypass})
			if !ok {
				t.Fatalf("stuck in %s", phase)
			}
			phase, n = tr.To, n+1
		}
		if phase != "DaPhatHanh" || n != want {
			t.Errorf("bypass %v: ended in %s after %d moves, want DaPhatHanh after %d", bypass, phase, n, want)
		}
	}
}

func TestAllowed(t *testing.T) {
	d := designDefinition()
	tests := []struct {
		name   string
		from   string
		actor  engine.Actor
		bypass bool
		want   []string
	}{
		{"drafter at DangSoanThao", "DangSoanThao", engine.Actor{Roles: []string{"Drafter"}}, false, []string{"DangDamPhan"}},
		{"drafter at DangDamPhan", "DangDamPhan", engine.Actor{Roles: []string{"Drafter"}}, false, []string{"DangGopY", "DangSoanThao"}},
		{"drafter at DangInKy", "DangInKy", engine.Actor{Roles: []string{"Drafter"}}, false, []string{"DangKiemTraCCM"}},
		{"drafter at DangInKy with bypass", "DangInKy", engine.Actor{Roles: []string{"DeptManager"}}, true, []string{"DangKiemTraCCM", "DangTrinhKy"}},
		{"project manager at DangGopY", "DangGopY", engine.Actor{Roles: []string{"ProjectManager"}}, false, []string{"DangInKy", "DangDamPhan"}},
		{"finance at DangGopY", "DangGopY", engine.Actor{Roles: []string{"Finance"}}, false, []string{}},
		{"cost control at DangKiemTraCCM", "DangKiemTraCCM", engine.Actor{Roles: []string{"CostControl"}}, false, []string{"DangTrinhKy", "DangInKy"}},
		{"signer at DangTrinhKy", "DangTrinhKy", engine.Actor{Roles: []string{"AuthorizedSigner"}}, false, []string{"DangDongDau", "TuChoi"}},
		{"hr at DangDongDau", "DangDongDau", engine.Actor{Roles: []string{"HrAdmin"}}, false, []string{"DaPhatHanh"}},
		{"project manager at DangSoanThao", "DangSoanThao", engine.Actor{Roles: []string{"ProjectManager"}}, false, []string{}},
		{"admin at DangInKy", "DangInKy", engine.Actor{Admin: true}, false, []string{"DangKiemTraCCM"}},
		{"admin at DangInKy with bypass", "DangInKy", engine.Actor{Admin: true}, true, []string{"DangKiemTraCCM", "DangTrinhKy"}},
		{"system at DangTrinhKy", "DangTrinhKy", engine.Actor{System: true}, false, []string{"DangDongDau", "TuChoi"}},
		{"admin at DaPhatHanh", "DaPhatHanh", engine.Actor{Admin: true}, true, []string{}},
		{"admin at TuChoi", "TuChoi", engine.Actor{Admin: true}, true, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := d.Allowed(tc.from, tc.actor, engine.Facts{bypassFact: tc.bypass})
			if got == nil {
				t.Fatal("nil list; want an empty one")
			}
			var to []string
			for _, tr := range got {
				to = append(to, tr.To)
			}
			if !slices.Equal(to, tc.want) && !(len(to) == 0 && len(tc.want) == 0) {
				t.Fatalf("allowed %v, want %v", to, tc.want)
			}
		})
	}
}

func TestPhasesSeenBy(t *testing.T) {
	d := designDefinition()
	tests := []struct {
		roles []string
		want  []string
	}{
		{[]string{"Drafter"}, []string{"DangSoanThao", "DangDamPhan", "DangInKy"}},
		{[]string{"DeptManager"}, []string{"DangSoanThao", "DangDamPhan", "DangInKy"}},
		{[]string{"ProjectManager"}, []string{"DangGopY"}},
		{[]string{"Procurement"}, []string{"DangGopY"}},
		{[]string{"Finance"}, []string{"DangGopY"}},
		{[]string{"Accounting"}, []string{"DangGopY"}},
		{[]string{"Equipment"}, []string{"DangGopY"}},
		{[]string{"CostControl"}, []string{"DangGopY", "DangKiemTraCCM"}},
		{[]string{"Director"}, []string{"DangTrinhKy"}},
		{[]string{"AuthorizedSigner"}, []string{"DangTrinhKy"}},
		{[]string{"HrAdmin"}, []string{"DangDongDau"}},
		{[]string{"HrAdmin", "Director"}, []string{"DangTrinhKy", "DangDongDau"}},
		{nil, nil},
		{[]string{"Admin"}, nil}, // Admin sees all through its own rule, not through inbox roles
	}
	for _, tc := range tests {
		got := d.PhasesSeenBy(tc.roles)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v sees %v, want %v", tc.roles, got, tc.want)
		}
	}
	for _, r := range nonAdminRoles {
		for _, p := range d.PhasesSeenBy([]string{r}) {
			if d.Terminal(p) {
				t.Errorf("%s sees terminal %s", r, p)
			}
		}
	}
}

func TestSLAAndSteps(t *testing.T) {
	d := designDefinition()
	want := map[string]int{"DangSoanThao": 168, "DangDamPhan": 120, "DangGopY": 72, "DangInKy": 48, "DangKiemTraCCM": 48,
		"DangTrinhKy": 72, "DangDongDau": 24, "DaPhatHanh": 0, "TuChoi": 0, "Unknown": 0}
	for phase, h := range want {
		if got := d.SLA(phase); got != time.Duration(h)*time.Hour {
			t.Errorf("SLA(%s) = %v, want %dh", phase, got, h)
		}
	}
	// A terminal step has no deadline whatever hours it carries.
	odd := designDefinition()
	odd.Steps[7].SLAHours = 5
	if got := odd.SLA("DaPhatHanh"); got != 0 {
		t.Errorf("terminal SLA %v", got)
	}
	for _, p := range contractPhases {
		if !d.HasPhase(p) {
			t.Errorf("no step %s", p)
		}
		if got, want := d.Terminal(p), p == "DaPhatHanh" || p == "TuChoi"; got != want {
			t.Errorf("Terminal(%s) = %v", p, got)
		}
	}
	if d.HasPhase("Unknown") || d.Terminal("Unknown") {
		t.Error("unknown phase reported as a step")
	}
	if got := d.InboxRoles("DangGopY"); !slices.Equal(got, []string{"ProjectManager", "Procurement", "CostControl", "Finance", "Accounting", "Equipment"}) {
		t.Errorf("inbox of DangGopY: %v", got)
	}
	if got := d.InboxRoles("Unknown"); len(got) != 0 {
		t.Errorf("inbox of an unknown phase: %v", got)
	}
	if got := d.NonTerminalPhases(); len(got) != 7 || slices.Contains(got, "DaPhatHanh") || slices.Contains(got, "TuChoi") {
		t.Errorf("non-terminal phases %v", got)
	}
}

// TestMovePairListedTwice: when a definition lists one pair twice (under
// different guards or roles), an earlier listing that does not apply never
// hides a later one that does.
func TestMovePairListedTwice(t *testing.T) {
	d := &engine.Definition{Spec: engine.Spec{InitialPhase: "A",
		Steps: []engine.Step{{Phase: "A", SLAHours: 1}, {Phase: "B", Terminal: true}},
		Transitions: []engine.Transition{
			{From: "A", To: "B", Kind: engine.Bypass, Roles: []string{"X"}, Guard: "urgent"},
			{From: "A", To: "B", Kind: engine.Forward, Roles: []string{"Y"}, Normal: true},
		}}}
	tests := []struct {
		name  string
		roles []string
		facts engine.Facts
		kind  engine.MoveKind
		code  string
	}{
		{"second listing applies", []string{"Y"}, nil, engine.Forward, ""},
		{"first listing applies", []string{"X"}, engine.Facts{"urgent": true}, engine.Bypass, ""},
		{"guarded listing off, other role", []string{"X"}, nil, "", "transition_forbidden"},
		{"no role anywhere", []string{"Z"}, engine.Facts{"urgent": true}, "", "transition_forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := d.Move("A", "B", engine.Actor{Roles: tc.roles}, tc.facts)
			if tc.code != "" {
				wantErr(t, err, apperr.KindForbidden, tc.code)
				return
			}
			if err != nil || tr.Kind != tc.kind {
				t.Fatalf("got %+v, %v; want kind %s", tr, err, tc.kind)
			}
		})
	}
}
