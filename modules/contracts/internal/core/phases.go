package core

import (
	"github.com/contractflow/contractflow/modules/workflowdesigner"
)

// The nine contract phases (seed §3.1); they serialise by name.
const (
	DangSoanThao   = "DangSoanThao"
	DangDamPhan    = "DangDamPhan"
	DangGopY       = "DangGopY"
	DangKiemTraCCM = "DangKiemTraCCM"
	DangInKy       = "DangInKy"
	DangTrinhKy    = "DangTrinhKy"
	DangDongDau    = "DangDongDau"
	DaPhatHanh     = "DaPhatHanh"
	TuChoi         = "TuChoi"
)

// Phases lists every phase in workflow order.
var Phases = []string{DangSoanThao, DangDamPhan, DangGopY, DangKiemTraCCM, DangInKy, DangTrinhKy, DangDongDau, DaPhatHanh, TuChoi}

// Deletion is refused from DangKiemTraCCM on (seed §3.2 rule 6, DESIGN §5).
var undeletable = []string{DangKiemTraCCM, DangTrinhKy, DangDongDau, DaPhatHanh, TuChoi}

// Contract types and the code segment of each (DESIGN §5).
var typeCodes = map[string]string{
	"Subcontract":          "HDTP",
	"PieceWork":            "HDGK",
	"Supply":               "NCC",
	"Service":              "HDDV",
	"Purchase":             "MB",
	"FrameworkSupply":      "HDKNCC",
	"FrameworkSubcontract": "HDKTP",
}

// ContractTypes in a stable order.
var ContractTypes = []string{"Subcontract", "PieceWork", "Supply", "Service", "Purchase", "FrameworkSupply", "FrameworkSubcontract"}

// isFramework reports the two types whose code carries a year instead of a
// project code, and whose project is optional.
func isFramework(t string) bool { return t == "FrameworkSupply" || t == "FrameworkSubcontract" }

// documentType is the workflow assignment key of a contract type.
func documentType(contractType string) string { return "contract." + contractType }

// FactBypass is the guard fact of the bypass move.
const FactBypass = "bypassProcurementAndCCM"

// Kind declares contracts to the workflow runtime, with the default
// definition contract-default v1 of DESIGN §4 assigned to every type; the
// service adds how to load a contract and its events (Service.Kind).
func Kind() workflowdesigner.Kind {
	docTypes := make([]string, len(ContractTypes))
	for i, t := range ContractTypes {
		docTypes[i] = documentType(t)
	}
	drafters := []string{"Drafter", "DeptManager"}
	signers := []string{"Director", "AuthorizedSigner"}
	pm := []string{"ProjectManager"}
	ccm := []string{"CostControl"}
	move := func(from, to string, kind workflowdesigner.MoveKind, roles []string, normal bool) workflowdesigner.Transition {
		return workflowdesigner.Transition{From: from, To: to, Kind: kind, Roles: roles, Normal: normal}
	}
	bypass := move(DangInKy, DangTrinhKy, workflowdesigner.Bypass, drafters, true)
	bypass.Guard = FactBypass
	spec := workflowdesigner.Spec{
		Key: "contract-default", Name: "Default contract approval", InitialPhase: DangSoanThao,
		Steps: []workflowdesigner.Step{
			{Phase: DangSoanThao, SLAHours: 168, InboxRoles: drafters},
			{Phase: DangDamPhan, SLAHours: 120, InboxRoles: drafters},
			{Phase: DangGopY, SLAHours: 72, InboxRoles: []string{"ProjectManager", "Procurement", "CostControl", "Finance", "Accounting", "Equipment"}},
			{Phase: DangInKy, SLAHours: 48, InboxRoles: drafters},
			{Phase: DangKiemTraCCM, SLAHours: 48, InboxRoles: ccm},
			{Phase: DangTrinhKy, SLAHours: 72, InboxRoles: signers},
			{Phase: DangDongDau, SLAHours: 24, InboxRoles: []string{"HrAdmin"}},
			{Phase: DaPhatHanh, Terminal: true},
			{Phase: TuChoi, Terminal: true},
		},
		Transitions: []workflowdesigner.Transition{
			move(DangSoanThao, DangDamPhan, workflowdesigner.Forward, drafters, true),
			move(DangDamPhan, DangGopY, workflowdesigner.Forward, drafters, true),
			move(DangGopY, DangInKy, workflowdesigner.Forward, pm, true),
			move(DangInKy, DangKiemTraCCM, workflowdesigner.Forward, drafters, true),
			move(DangKiemTraCCM, DangTrinhKy, workflowdesigner.Forward, ccm, true),
			move(DangTrinhKy, DangDongDau, workflowdesigner.Forward, signers, true),
			move(DangDongDau, DaPhatHanh, workflowdesigner.Forward, []string{"HrAdmin"}, true),
			bypass,
			move(DangDamPhan, DangSoanThao, workflowdesigner.Return, drafters, false),
			move(DangGopY, DangDamPhan, workflowdesigner.Return, pm, false),
			move(DangKiemTraCCM, DangInKy, workflowdesigner.Return, ccm, false),
			move(DangTrinhKy, TuChoi, workflowdesigner.Reject, signers, false),
		},
	}
	return workflowdesigner.Kind{Name: KindName, Phases: Phases, DocumentTypes: docTypes,
		Defaults: []workflowdesigner.Default{{Spec: spec, AssignTo: docTypes}}, Facts: []string{FactBypass},
		Tables: workflowdesigner.Tables{Documents: "contracts", Owner: "drafter_id", History: "contract_approvals", Key: "contract_id"}}
}

// KindName is the contract's document kind on the workflow runtime.
const KindName = "contract"
