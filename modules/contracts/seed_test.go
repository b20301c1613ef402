package contracts_test

import (
	"context"
	"slices"
	"testing"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/kernel"
)

var contractTypes = []string{"Subcontract", "PieceWork", "Supply", "Service", "Purchase", "FrameworkSupply", "FrameworkSubcontract"}

// designMove is one row of DESIGN §4's table of the 12 pairs.
type designMove struct {
	from, to, kind string
	roles          []string
	normal         bool
	guard          string
}

var designMoves = []designMove{
	{DangSoanThao, DangDamPhan, "forward", []string{"DeptManager", "Drafter"}, true, ""},
	{DangDamPhan, DangGopY, "forward", []string{"DeptManager", "Drafter"}, true, ""},
	{DangGopY, DangInKy, "forward", []string{"ProjectManager"}, true, ""},
	{DangInKy, DangKiemTraCCM, "forward", []string{"DeptManager", "Drafter"}, true, ""},
	{DangKiemTraCCM, DangTrinhKy, "forward", []string{"CostControl"}, true, ""},
	{DangTrinhKy, DangDongDau, "forward", []string{"AuthorizedSigner", "Director"}, true, ""},
	{DangDongDau, DaPhatHanh, "forward", []string{"HrAdmin"}, true, ""},
	{DangInKy, DangTrinhKy, "bypass", []string{"DeptManager", "Drafter"}, true, "bypassProcurementAndCCM"},
	{DangDamPhan, DangSoanThao, "return", []string{"DeptManager", "Drafter"}, false, ""},
	{DangGopY, DangDamPhan, "return", []string{"ProjectManager"}, false, ""},
	{DangKiemTraCCM, DangInKy, "return", []string{"CostControl"}, false, ""},
	{DangTrinhKy, TuChoi, "reject", []string{"AuthorizedSigner", "Director"}, false, ""},
}

// inboxRoles of seed §3.1, with the abbreviations spelled out (DESIGN §2).
var inboxRoles = map[string][]string{
	DangSoanThao:   {"DeptManager", "Drafter"},
	DangDamPhan:    {"DeptManager", "Drafter"},
	DangGopY:       {"Accounting", "CostControl", "Equipment", "Finance", "Procurement", "ProjectManager"},
	DangKiemTraCCM: {"CostControl"},
	DangInKy:       {"DeptManager", "Drafter"},
	DangTrinhKy:    {"AuthorizedSigner", "Director"},
	DangDongDau:    {"HrAdmin"},
	DaPhatHanh:     nil,
	TuChoi:         nil,
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestSeededDefinition: contract-default v1 is published exactly as DESIGN
// §4 states it and assigned to all seven contract types; seeding again
// changes nothing; a new contract pins the assigned definition.
func TestSeededDefinition(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		wf, ok := kernel.Lookup[workflowdesigner.Engine](e.app.Kernel.App())
		if !ok {
			t.Fatal("no workflow engine")
		}
		var def *workflowdesigner.Definition
		for _, ct := range contractTypes {
			d, err := wf.ForDocumentType(ctx, "contract."+ct)
			if err != nil {
				t.Fatalf("%s: %v", ct, err)
			}
			if def == nil {
				def = d
			}
			if d.ID != def.ID {
				t.Fatalf("%s is assigned %s, others %s", ct, d.ID, def.ID)
			}
		}
		if def.Key != "contract-default" || def.Version != 1 || !def.Published || def.DocumentKind != "contract" || def.InitialPhase != DangSoanThao {
			t.Fatalf("definition %+v", def.Spec)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM workflow_type_assignments WHERE document_type LIKE 'contract.%' AND definition_id = ?", def.ID); n != 7 {
			t.Fatalf("%d contract types assigned, want 7", n)
		}
		published, err := wf.Published(ctx, "contract")
		if err != nil || len(published) != 1 || published[0].ID != def.ID {
			t.Fatalf("published contract definitions %v, %v", published, err)
		}

		t.Run("steps", func(t *testing.T) {
			if len(def.Steps) != 9 {
				t.Fatalf("%d steps, want 9", len(def.Steps))
			}
			for _, s := range def.Steps {
				want, ok := inboxRoles[s.Phase]
				if !ok {
					t.Fatalf("unexpected step %s", s.Phase)
				}
				terminal := s.Phase == DaPhatHanh || s.Phase == TuChoi
				if s.Terminal != terminal || (!terminal && s.SLAHours != slaHours[s.Phase]) {
					t.Errorf("step %+v, want terminal %v, %dh", s, terminal, slaHours[s.Phase])
				}
				if got := sorted(s.InboxRoles); !slices.Equal(got, want) && len(got)+len(want) > 0 {
					t.Errorf("%s inbox roles %v, want %v", s.Phase, got, want)
				}
			}
		})
		t.Run("the 12 pairs", func(t *testing.T) {
			if len(def.Transitions) != 12 {
				t.Fatalf("%d transitions, want 12", len(def.Transitions))
			}
			for _, m := range designMoves {
				found := false
				for _, tr := range def.Transitions {
					if tr.From != m.from || tr.To != m.to {
						continue
					}
					found = true
					if string(tr.Kind) != m.kind || tr.Normal != m.normal || tr.Guard != m.guard || !slices.Equal(sorted(tr.Roles), m.roles) {
						t.Errorf("%s→%s is %+v, want %+v", m.from, m.to, tr, m)
					}
				}
				if !found {
					t.Errorf("no move %s→%s", m.from, m.to)
				}
			}
		})

		t.Run("seeding twice changes nothing", func(t *testing.T) {
			tables := []string{"workflow_definitions", "workflow_steps", "workflow_step_approvers", "workflow_transitions",
				"workflow_transition_roles", "workflow_type_assignments"}
			before := map[string]int64{}
			for _, tb := range tables {
				before[tb] = e.count(t, "SELECT COUNT(*) FROM "+tb)
			}
			if err := e.app.Kernel.Seed(ctx); err != nil {
				t.Fatalf("seed again: %v", err)
			}
			for _, tb := range tables {
				if n := e.count(t, "SELECT COUNT(*) FROM "+tb); n != before[tb] {
					t.Errorf("%s: %d rows after the second seed, %d before", tb, n, before[tb])
				}
			}
			want := map[string]int64{"workflow_definitions": 1, "workflow_steps": 9, "workflow_transitions": 12, "workflow_type_assignments": 7}
			for tb, n := range want {
				if before[tb] != n {
					t.Errorf("%s has %d rows, want %d", tb, before[tb], n)
				}
			}
			d, err := wf.ForDocumentType(ctx, "contract.Supply")
			if err != nil || d.ID != def.ID {
				t.Fatalf("after reseeding Supply has %v, %v", d, err)
			}
		})

		t.Run("a new contract pins the assigned definition", func(t *testing.T) {
			for _, ct := range []string{"Subcontract", "FrameworkSupply"} {
				c := e.create(t, e.admin, map[string]any{"contractType": ct})
				if c.WorkflowDefinitionID != def.ID {
					t.Fatalf("%s pinned %q, want %s", ct, c.WorkflowDefinitionID, def.ID)
				}
				if got := e.get(t, e.admin, c.ID).WorkflowDefinitionID; got != def.ID {
					t.Fatalf("read back %q", got)
				}
			}
		})
	})
}
