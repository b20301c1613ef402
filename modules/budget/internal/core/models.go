package core

import (
	"time"

	"github.com/contractflow/contractflow/platform/money"
)

// Budget statuses: Draft → Approved (POST …/approve) → Closed (PUT with
// status Closed). Approve freezes planned amounts; Close stops new
// reservations.
const (
	StatusDraft    = "Draft"
	StatusApproved = "Approved"
	StatusClosed   = "Closed"
)

// What the contract check does when a contract's value exceeds the line's
// remaining amount.
const (
	ExceedWarn  = "Warn"
	ExceedBlock = "Block"
)

// Commitment kinds. Reserved, Committed and Actual count toward a line's
// totals while open; Released records the end of a holding and never
// counts.
const (
	KindReserved  = "Reserved"
	KindCommitted = "Committed"
	KindActual    = "Actual"
	KindReleased  = "Released"
)

// Sources of a commitment row.
const (
	SourceContract = "contract" // written by the contract hook
	SourceManual   = "manual"   // posted through the endpoint
)

// Budget is one budget and its totals, which are recomputed from the lines
// in the transaction of every change.
type Budget struct {
	ID               string
	Code             string
	Name             string
	ProjectID        *string
	DepartmentID     *string
	FiscalYear       int
	Currency         string
	Status           string
	OnExceed         string
	Description      string
	PlannedTotal     money.Amount
	AdjustmentsTotal money.Amount
	ReservedTotal    money.Amount
	CommittedTotal   money.Amount
	ActualTotal      money.Amount
	Remaining        money.Amount
	ApprovedAt       *time.Time
	ApprovedBy       *string
	ClosedAt         *time.Time
	ClosedBy         *string
	SearchText       string
	Version          int
	CreatedAt        time.Time `gorm:"autoCreateTime:false"`
	CreatedBy        *string
	UpdatedAt        time.Time `gorm:"autoUpdateTime:false"`
	UpdatedBy        *string
	DeletedAt        *time.Time
	DeletedBy        *string
}

func (Budget) TableName() string { return "budgets" }

// Line is one line of a budget. OriginalAmount is the planned amount as
// set while the budget was Draft; PlannedAmount adds every adjustment.
type Line struct {
	ID               string
	BudgetID         string
	Code             string
	Name             string
	Category         *string
	OriginalAmount   money.Amount
	AdjustmentsTotal money.Amount
	PlannedAmount    money.Amount
	ReservedAmount   money.Amount
	CommittedAmount  money.Amount
	ActualAmount     money.Amount
	Remaining        money.Amount
	Version          int
	CreatedAt        time.Time `gorm:"autoCreateTime:false"`
	CreatedBy        *string
	UpdatedAt        time.Time `gorm:"autoUpdateTime:false"`
	UpdatedBy        *string
	DeletedAt        *time.Time
	DeletedBy        *string
}

func (Line) TableName() string { return "budget_lines" }

// Commitment is one entry of a line's ledger. Entries are never edited
// except to close them: when a contract's reservation becomes a commitment
// or is released, the open entry gets ClosedAt and SupersededBy (the entry
// that replaced it), so the history stays and the totals count open
// entries only.
type Commitment struct {
	ID           string
	BudgetLineID string
	ContractID   *string
	Amount       money.Amount
	Kind         string
	Note         string
	Source       string
	ClosedAt     *time.Time
	SupersededBy *string
	CreatedAt    time.Time `gorm:"autoCreateTime:false"`
	CreatedBy    *string
}

func (Commitment) TableName() string { return "budget_commitments" }

// Adjustment changes an Approved budget's planned amount of one line.
type Adjustment struct {
	ID           string
	BudgetLineID string
	Delta        money.Amount
	Reason       string
	CreatedAt    time.Time `gorm:"autoCreateTime:false"`
	CreatedBy    *string
}

func (Adjustment) TableName() string { return "budget_adjustments" }
