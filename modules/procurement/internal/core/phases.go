package core

import (
	"slices"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
)

// KindName is the purchase evaluation's document kind on the workflow runtime.
const KindName = "purchaseEvaluation"

// The phases of a purchase evaluation (DESIGN §7); they serialise by name.
const (
	DangSoanThao     = "DangSoanThao"
	ChoDuAn          = "ChoDuAn"
	ChoYKienPhongBan = "ChoYKienPhongBan"
	ChoCCMKiemTra    = "ChoCCMKiemTra"
	ChoCEODuyetNCC   = "ChoCEODuyetNCC"
	DaDuyet          = "DaDuyet"
	TuChoi           = "TuChoi"
)

// Phases lists every phase in workflow order.
var Phases = []string{DangSoanThao, ChoDuAn, ChoYKienPhongBan, ChoCCMKiemTra, ChoCEODuyetNCC, DaDuyet, TuChoi}

// The two approval policies.
const (
	PolicyA = "A"
	PolicyB = "B"
)

// Policies in order.
var Policies = []string{PolicyA, PolicyB}

// documentType is the workflow assignment key of a policy.
func documentType(policy string) string { return KindName + "." + policy }

// The preconditions the default definitions name.
const (
	// PreconditionReady refuses submitting an evaluation without a winner,
	// enough quotations, a reason for a winner that is not the cheapest and
	// payment terms adding up to 100 (400 validation_failed on the fields).
	PreconditionReady = "readyToSubmit"
	// PreconditionOpinions refuses policy B's move out of ChoYKienPhongBan
	// until every required opinion is saved (409 opinions_missing).
	PreconditionOpinions = "opinionsComplete"
)

// Opinion kinds and the role that gives each (DESIGN §2 abbreviations).
var OpinionRoles = map[string]string{
	"PRO": identity.RoleProcurement,
	"CCM": identity.RoleCostControl,
	"FIN": identity.RoleFinance,
	"ACT": identity.RoleAccounting,
	"EQU": identity.RoleEquipment,
}

// OpinionKinds in a stable order.
var OpinionKinds = []string{"PRO", "CCM", "FIN", "ACT", "EQU"}

// Verdicts of an opinion.
var Verdicts = []string{"Agree", "AgreeWithConditions", "Disagree"}

// Categories of what an evaluation buys.
var Categories = []string{"Material", "Subcontract", "Service", "Equipment"}

// specs are the default definitions purchase-evaluation-a and -b v1
// (DESIGN §7): each waiting phase has its normal forward move, a return to
// DangSoanThao and a rejection, by that phase's roles.
func specs() (a, b workflowdesigner.Spec) {
	const (
		pro = identity.RoleProcurement
		pm  = identity.RoleProjectManager
		ccm = identity.RoleCostControl
		dir = identity.RoleDirector
	)
	submitters := []string{pro, identity.RoleDrafter}
	waiting := func(phase string, roles []string, next string, precondition string) []workflowdesigner.Transition {
		return []workflowdesigner.Transition{
			{From: phase, To: next, Kind: workflowdesigner.Forward, Roles: roles, Normal: true, Precondition: precondition},
			{From: phase, To: DangSoanThao, Kind: workflowdesigner.Return, Roles: roles},
			{From: phase, To: TuChoi, Kind: workflowdesigner.Reject, Roles: roles},
		}
	}
	submit := workflowdesigner.Transition{From: DangSoanThao, To: ChoDuAn, Kind: workflowdesigner.Forward,
		Roles: submitters, Normal: true, Precondition: PreconditionReady}
	draft := workflowdesigner.Step{Phase: DangSoanThao, SLAHours: 168, InboxRoles: []string{pro}}
	ends := []workflowdesigner.Step{{Phase: DaDuyet, Terminal: true}, {Phase: TuChoi, Terminal: true}}

	a = workflowdesigner.Spec{Key: "purchase-evaluation-a", Name: "Purchase evaluation, policy A", InitialPhase: DangSoanThao,
		Steps: append([]workflowdesigner.Step{draft,
			{Phase: ChoDuAn, SLAHours: 72, InboxRoles: []string{pm}},
			{Phase: ChoCEODuyetNCC, SLAHours: 72, InboxRoles: []string{dir}},
		}, ends...),
		Transitions: slices.Concat([]workflowdesigner.Transition{submit},
			waiting(ChoDuAn, []string{pm}, ChoCEODuyetNCC, ""),
			waiting(ChoCEODuyetNCC, []string{dir}, DaDuyet, "")),
	}
	opinionRoles := []string{pro}
	for _, k := range OpinionKinds[1:] {
		opinionRoles = append(opinionRoles, OpinionRoles[k])
	}
	b = workflowdesigner.Spec{Key: "purchase-evaluation-b", Name: "Purchase evaluation, policy B", InitialPhase: DangSoanThao,
		Steps: append([]workflowdesigner.Step{draft,
			{Phase: ChoDuAn, SLAHours: 72, InboxRoles: []string{pm}},
			{Phase: ChoYKienPhongBan, SLAHours: 72, InboxRoles: opinionRoles},
			{Phase: ChoCCMKiemTra, SLAHours: 48, InboxRoles: []string{ccm}},
			{Phase: ChoCEODuyetNCC, SLAHours: 72, InboxRoles: []string{dir}},
		}, ends...),
		Transitions: slices.Concat([]workflowdesigner.Transition{submit},
			waiting(ChoDuAn, []string{pm}, ChoYKienPhongBan, ""),
			waiting(ChoYKienPhongBan, []string{pro}, ChoCCMKiemTra, PreconditionOpinions),
			waiting(ChoCCMKiemTra, []string{ccm}, ChoCEODuyetNCC, ""),
			waiting(ChoCEODuyetNCC, []string{dir}, DaDuyet, "")),
	}
	return a, b
}

// Kind declares purchase evaluations to the workflow runtime, with the two
// default definitions assigned to their policies; the service adds how to
// load an evaluation, its events and its preconditions (Service.Kind).
func Kind() workflowdesigner.Kind {
	a, b := specs()
	return workflowdesigner.Kind{Name: KindName, Phases: Phases,
		DocumentTypes: []string{documentType(PolicyA), documentType(PolicyB)},
		Defaults: []workflowdesigner.Default{
			{Spec: a, AssignTo: []string{documentType(PolicyA)}},
			{Spec: b, AssignTo: []string{documentType(PolicyB)}},
		},
		Tables: workflowdesigner.Tables{Documents: "purchase_evaluations", Owner: "created_by",
			History: "purchase_evaluation_history", Key: "evaluation_id"}}
}
