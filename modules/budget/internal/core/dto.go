package core

import (
	"time"

	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/paging"
)

// ListSpec whitelists the sort fields of GET /api/budgets.
var ListSpec = paging.Spec{
	Sort: map[string]string{"code": "code", "name": "name", "fiscalYear": "fiscal_year", "createdAt": "created_at",
		"plannedTotal": "planned_total", "remaining": "remaining"},
	DefaultSort: "-fiscalYear,code",
}

// BudgetInput is the body of POST and PUT /api/budgets. PUT is a full
// update of the editable fields; Status only closes an Approved budget.
type BudgetInput struct {
	Code         string  `json:"code"`
	Name         string  `json:"name"`
	ProjectID    *string `json:"projectId" validate:"omitempty,uuid"`
	DepartmentID *string `json:"departmentId" validate:"omitempty,uuid"`
	FiscalYear   int     `json:"fiscalYear" validate:"required,gte=2000,lte=2100"`
	Currency     string  `json:"currency" validate:"omitempty,len=3,uppercase,alpha"`
	OnExceed     string  `json:"onExceed" validate:"omitempty,oneof=Warn Block"`
	Description  string  `json:"description" validate:"max=4000"`
	Status       string  `json:"status" validate:"omitempty,oneof=Draft Approved Closed"`
	Version      *int    `json:"version"`
}

// LineInput is the body of POST and PUT …/lines. PlannedAmount is required
// on POST; on PUT it may be omitted (unchanged), and of an Approved budget
// it may only repeat the current planned amount.
type LineInput struct {
	Code          string        `json:"code"`
	Name          string        `json:"name"`
	Category      *string       `json:"category" validate:"omitempty,max=100"`
	PlannedAmount *money.Amount `json:"plannedAmount"`
	Version       *int          `json:"version"`
}

// AdjustmentInput is the body of POST …/adjustments.
type AdjustmentInput struct {
	Delta  *money.Amount `json:"delta" validate:"required"`
	Reason string        `json:"reason" validate:"required,max=2000"`
}

// CommitmentInput is the body of POST …/commitments.
type CommitmentInput struct {
	ContractID *string       `json:"contractId" validate:"omitempty,uuid"`
	Amount     *money.Amount `json:"amount" validate:"required"`
	Kind       string        `json:"kind" validate:"required,oneof=Reserved Committed Actual Released"`
	Note       string        `json:"note" validate:"max=2000"`
}

// BudgetDTO is a budget in lists; the detail adds its lines.
type BudgetDTO struct {
	ID               string       `json:"id"`
	Code             string       `json:"code"`
	Name             string       `json:"name"`
	ProjectID        *string      `json:"projectId"`
	DepartmentID     *string      `json:"departmentId"`
	FiscalYear       int          `json:"fiscalYear"`
	Currency         string       `json:"currency"`
	Status           string       `json:"status"`
	OnExceed         string       `json:"onExceed"`
	Description      string       `json:"description"`
	PlannedTotal     money.Amount `json:"plannedTotal"`
	AdjustmentsTotal money.Amount `json:"adjustmentsTotal"`
	ReservedTotal    money.Amount `json:"reservedTotal"`
	CommittedTotal   money.Amount `json:"committedTotal"`
	ActualTotal      money.Amount `json:"actualTotal"`
	Remaining        money.Amount `json:"remaining"`
	ApprovedAt       *time.Time   `json:"approvedAt"`
	ApprovedBy       *string      `json:"approvedBy"`
	ClosedAt         *time.Time   `json:"closedAt"`
	ClosedBy         *string      `json:"closedBy"`
	Version          int          `json:"version"`
	CreatedAt        time.Time    `json:"createdAt"`
	CreatedBy        *string      `json:"createdBy"`
	UpdatedAt        time.Time    `json:"updatedAt"`
	UpdatedBy        *string      `json:"updatedBy"`
}

// Detail is GET /api/budgets/{id}: the budget with its lines.
type Detail struct {
	BudgetDTO
	Lines []LineDTO `json:"lines"`
}

// LineDTO is one line with its totals, the open entries that hold money on
// it (with the contract holding each, when a contract does) and its
// adjustments.
type LineDTO struct {
	ID               string          `json:"id"`
	BudgetID         string          `json:"budgetId"`
	Code             string          `json:"code"`
	Name             string          `json:"name"`
	Category         *string         `json:"category"`
	OriginalAmount   money.Amount    `json:"originalAmount"`
	AdjustmentsTotal money.Amount    `json:"adjustmentsTotal"`
	PlannedAmount    money.Amount    `json:"plannedAmount"`
	ReservedAmount   money.Amount    `json:"reservedAmount"`
	CommittedAmount  money.Amount    `json:"committedAmount"`
	ActualAmount     money.Amount    `json:"actualAmount"`
	Remaining        money.Amount    `json:"remaining"`
	Version          int             `json:"version"`
	Commitments      []CommitmentDTO `json:"commitments"`
	Adjustments      []AdjustmentDTO `json:"adjustments"`
	CreatedAt        time.Time       `json:"createdAt"`
	CreatedBy        *string         `json:"createdBy"`
	UpdatedAt        time.Time       `json:"updatedAt"`
	UpdatedBy        *string         `json:"updatedBy"`
}

// CommitmentDTO is one ledger entry.
type CommitmentDTO struct {
	ID           string       `json:"id"`
	BudgetLineID string       `json:"budgetLineId"`
	ContractID   *string      `json:"contractId"`
	Amount       money.Amount `json:"amount"`
	Kind         string       `json:"kind"`
	Note         string       `json:"note"`
	Source       string       `json:"source"`
	CreatedAt    time.Time    `json:"createdAt"`
	CreatedBy    *string      `json:"createdBy"`
}

// AdjustmentDTO is one adjustment.
type AdjustmentDTO struct {
	ID           string       `json:"id"`
	BudgetLineID string       `json:"budgetLineId"`
	Delta        money.Amount `json:"delta"`
	Reason       string       `json:"reason"`
	CreatedAt    time.Time    `json:"createdAt"`
	CreatedBy    *string      `json:"createdBy"`
}

// PostedCommitment answers POST …/commitments: the entry and its line's
// totals after it.
type PostedCommitment struct {
	CommitmentDTO
	Line LineDTO `json:"line"`
}

// PostedAdjustment answers POST …/adjustments: the adjustment and its
// line's totals after it.
type PostedAdjustment struct {
	AdjustmentDTO
	Line LineDTO `json:"line"`
}

// ProjectUtilisation is one project's budgets in force, totalled.
type ProjectUtilisation struct {
	ProjectID string
	Planned   money.Amount
	Reserved  money.Amount
	Committed money.Amount
	Actual    money.Amount
}

func budgetDTO(b *Budget) BudgetDTO {
	return BudgetDTO{ID: b.ID, Code: b.Code, Name: b.Name, ProjectID: b.ProjectID, DepartmentID: b.DepartmentID,
		FiscalYear: b.FiscalYear, Currency: b.Currency, Status: b.Status, OnExceed: b.OnExceed, Description: b.Description,
		PlannedTotal: b.PlannedTotal, AdjustmentsTotal: b.AdjustmentsTotal, ReservedTotal: b.ReservedTotal,
		CommittedTotal: b.CommittedTotal, ActualTotal: b.ActualTotal, Remaining: b.Remaining,
		ApprovedAt: clock.UTC(b.ApprovedAt), ApprovedBy: b.ApprovedBy, ClosedAt: clock.UTC(b.ClosedAt), ClosedBy: b.ClosedBy,
		Version: b.Version, CreatedAt: b.CreatedAt.UTC(), CreatedBy: b.CreatedBy, UpdatedAt: b.UpdatedAt.UTC(), UpdatedBy: b.UpdatedBy}
}

func lineDTO(l *Line, cs []Commitment, as []Adjustment) LineDTO {
	d := LineDTO{ID: l.ID, BudgetID: l.BudgetID, Code: l.Code, Name: l.Name, Category: l.Category,
		OriginalAmount: l.OriginalAmount, AdjustmentsTotal: l.AdjustmentsTotal, PlannedAmount: l.PlannedAmount,
		ReservedAmount: l.ReservedAmount, CommittedAmount: l.CommittedAmount, ActualAmount: l.ActualAmount,
		Remaining: l.Remaining, Version: l.Version, Commitments: []CommitmentDTO{}, Adjustments: []AdjustmentDTO{},
		CreatedAt: l.CreatedAt.UTC(), CreatedBy: l.CreatedBy, UpdatedAt: l.UpdatedAt.UTC(), UpdatedBy: l.UpdatedBy}
	for i := range cs {
		d.Commitments = append(d.Commitments, commitmentDTO(&cs[i]))
	}
	for i := range as {
		d.Adjustments = append(d.Adjustments, adjustmentDTO(&as[i]))
	}
	return d
}

func commitmentDTO(c *Commitment) CommitmentDTO {
	return CommitmentDTO{ID: c.ID, BudgetLineID: c.BudgetLineID, ContractID: c.ContractID, Amount: c.Amount, Kind: c.Kind,
		Note: c.Note, Source: c.Source, CreatedAt: c.CreatedAt.UTC(), CreatedBy: c.CreatedBy}
}

func adjustmentDTO(a *Adjustment) AdjustmentDTO {
	return AdjustmentDTO{ID: a.ID, BudgetLineID: a.BudgetLineID, Delta: a.Delta, Reason: a.Reason,
		CreatedAt: a.CreatedAt.UTC(), CreatedBy: a.CreatedBy}
}
