// Package contracts is the public contract of the contracts module: the
// phases, and the events other modules react to. Contracts move on the
// workflow runtime as the document kind KindName; a module that must act
// inside a move, or refuse it (the budget check), hooks that kind with
// workflowdesigner.Engine.Hook; notifications subscribe to the events after
// commit.
package contracts

import (
	"context"
	"time"

	"github.com/contractflow/contractflow/modules/contracts/internal/core"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/money"
)

// Snapshot is what another module's hook on contract moves may read of the
// contract a move concerns (as it was before the move).
type Snapshot struct {
	ID, Title, ContractType, DrafterID string
	ProjectID, BudgetLineID, MaHopDong *string
	Value                              money.Amount
}

// SnapshotOf reads the contract behind a workflow document of KindName.
func SnapshotOf(d workflowdesigner.Document) (Snapshot, bool) {
	c, ok := d.Data.(*core.Contract)
	if !ok {
		return Snapshot{}, false
	}
	return Snapshot{ID: c.ID, Title: c.Title, ContractType: c.ContractType, DrafterID: c.DrafterID, ProjectID: c.ProjectID,
		BudgetLineID: c.BudgetLineID, MaHopDong: c.MaHopDong, Value: c.Value}, true
}

// Query is how other modules (reports) read contracts: aggregates computed
// by the database and exports streamed page by page. Obtain it with
// kernel.Need[contracts.Query].
type Query interface {
	// PhaseTotals groups the live contracts by phase.
	PhaseTotals(ctx context.Context, now time.Time) ([]PhaseTotal, error)
	// PublishedBetween counts live contracts that entered DaPhatHanh in [from, to).
	PublishedBetween(ctx context.Context, from, to time.Time) (int64, error)
	// Top ranks "supplier" or "project" by the value of live, not rejected contracts.
	Top(ctx context.Context, by string, n int) ([]GroupTotal, error)
	// CreatedIn totals live contracts created in each [bounds[i], bounds[i+1]).
	CreatedIn(ctx context.Context, bounds []time.Time) ([]PeriodTotal, error)
	// Export hands the matching live contracts to fn, a page at a time, oldest first.
	Export(ctx context.Context, f ExportFilter, fn func([]ExportRow) error) error
}

// Drafts is how another module drafts a contract (procurement, from an
// approved purchase evaluation). Obtain it with kernel.Need[contracts.Drafts]
// from a module that requires "contracts".
type Drafts interface {
	// CreateFromEvaluation drafts a contract exactly as POST /api/contracts
	// does (the same checks, 400 on the field at fault), as p, joining the
	// transaction in ctx so that it commits or rolls back with the caller's
	// own writes. It returns the new contract's id.
	CreateFromEvaluation(ctx context.Context, p authn.Principal, in FromEvaluation) (id string, err error)
}

// FromEvaluation is a contract drafted from a purchase evaluation: its
// winner as supplier, the winning amount as value, the evaluation's project
// and department, and the evaluation it came from.
type FromEvaluation struct {
	EvaluationID string
	Title        string
	ContractType string // one of the seven contract types
	SupplierID   string
	ProjectID    string
	DepartmentID *string
	Value        money.Amount
	Currency     string
	Description  string
}

// drafts adapts the service to Drafts: a contract from an evaluation is
// one POST /api/contracts would create.
type drafts struct{ svc *core.Service }

func (d drafts) CreateFromEvaluation(ctx context.Context, p authn.Principal, in FromEvaluation) (string, error) {
	projectID := in.ProjectID
	return d.svc.CreateFromEvaluation(ctx, p, core.CreateRequest{Title: in.Title, ContractType: in.ContractType,
		SupplierID: in.SupplierID, ProjectID: &projectID, DepartmentID: in.DepartmentID, Value: in.Value,
		Currency: in.Currency, PurchaseEvaluationID: &in.EvaluationID, Description: in.Description})
}

// Reporting types.
type (
	PhaseTotal   = core.PhaseTotal
	GroupTotal   = core.GroupTotal
	PeriodTotal  = core.PeriodTotal
	ExportFilter = core.ExportFilter
	ExportRow    = core.ExportRow
)

// KindName is the contracts' document kind on the workflow runtime.
const KindName = core.KindName

// Phases lists the nine phases in workflow order; TerminalPhases the two ends.
var (
	Phases         = core.Phases
	TerminalPhases = core.TerminalPhases
)

// Events published by the module.
type (
	Created      = core.Created
	Updated      = core.Updated
	Transitioned = core.Transitioned
	Deleted      = core.Deleted
	Commented    = core.Commented
	SLAWarning   = core.SLAWarning
)

// Event topics.
const (
	TopicCreated      = core.TopicCreated
	TopicUpdated      = core.TopicUpdated
	TopicTransitioned = core.TopicTransitioned
	TopicDeleted      = core.TopicDeleted
	TopicCommented    = core.TopicCommented
	TopicSLAWarning   = core.TopicSLAWarning
)

// Phases of a contract.
const (
	DangSoanThao   = core.DangSoanThao
	DangDamPhan    = core.DangDamPhan
	DangGopY       = core.DangGopY
	DangKiemTraCCM = core.DangKiemTraCCM
	DangInKy       = core.DangInKy
	DangTrinhKy    = core.DangTrinhKy
	DangDongDau    = core.DangDongDau
	DaPhatHanh     = core.DaPhatHanh
	TuChoi         = core.TuChoi
)

// ContractTypes lists the seven contract types a contract may have.
var ContractTypes = core.ContractTypes
