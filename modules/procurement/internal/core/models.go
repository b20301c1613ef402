package core

import (
	"time"

	"github.com/contractflow/contractflow/platform/money"
)

// Evaluation is one purchase evaluation. Amounts count hundredths of the
// currency unit (platform/money).
type Evaluation struct {
	ID                   string
	MaPhieu              string
	Policy               string
	Title                string
	ProjectID            string
	DepartmentID         *string
	Category             *string
	Description          string
	EstimatedValue       money.Amount
	Currency             string
	SelectedQuotationID  *string
	SelectionReason      string
	PaymentTerms         string // JSON array of PaymentTerm
	ContractID           *string
	ApprovedAt           *time.Time
	SearchText           string // title and voucher code, folded (platform/search)
	Phase                string
	SLADeadline          *time.Time `gorm:"column:sla_deadline"`
	SLAWarningSent       bool       `gorm:"column:sla_warning_sent"`
	WorkflowDefinitionID string
	HistoryHash          string // head of the hash-chained history (workflow runtime)
	Version              int
	CreatedAt            time.Time
	CreatedBy            string // the owner the visibility rule names
	UpdatedAt            time.Time
	UpdatedBy            *string
	DeletedAt            *time.Time
	DeletedBy            *string

	// held is the thread read under the evaluation's row lock in the
	// transaction that read the evaluation (Transition's), for the move's
	// preconditions; nil when the evaluation was read without the lock.
	held *thread
}

func (Evaluation) TableName() string { return "purchase_evaluations" }

// Quotation is one supplier's offer in an evaluation.
type Quotation struct {
	ID             string
	EvaluationID   string
	SupplierID     string
	Amount         money.Amount
	DeliveryDays   *int
	WarrantyMonths *int
	Notes          string
	CreatedAt      time.Time
	CreatedBy      string
	UpdatedAt      time.Time
	UpdatedBy      string
}

func (Quotation) TableName() string { return "purchase_evaluation_quotations" }

// Opinion is a department's opinion, one per evaluation and kind.
type Opinion struct {
	ID           string
	EvaluationID string
	Kind         string
	Verdict      string
	Comment      string
	UserID       string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (Opinion) TableName() string { return "pe_dept_opinions" }
