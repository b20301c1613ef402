package core

import (
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/money"
)

// Limits of one evaluation.
const (
	maxQuotations   = 50
	maxPaymentTerms = 20
)

// Ref names a master-data record.
type Ref struct {
	ID   string `json:"id"`
	Code string `json:"code"`
	Name string `json:"name"`
}

// PaymentTerm is one instalment. Percent is exact to two decimals (held as
// money.Amount, whose hundredths are hundredths of a percent), so terms of
// 33.33, 33.33 and 33.34 add up to exactly 100.
type PaymentTerm struct {
	Milestone string       `json:"milestone" validate:"required,max=200"`
	Percent   money.Amount `json:"percent"`
	DueDays   *int         `json:"dueDays" validate:"omitempty,gte=0,lte=3650"`
}

// Summary is an evaluation as lists and the inbox show it.
type Summary struct {
	ID                  string       `json:"id"`
	MaPhieu             string       `json:"maPhieu"`
	Policy              string       `json:"policy"`
	Title               string       `json:"title"`
	Category            *string      `json:"category"`
	Project             *Ref         `json:"project"`
	EstimatedValue      money.Amount `json:"estimatedValue"`
	Currency            string       `json:"currency"`
	Phase               string       `json:"phase"`
	SLADeadline         *time.Time   `json:"slaDeadline"`
	SelectedQuotationID *string      `json:"selectedQuotationId"`
	ContractID          *string      `json:"contractId"`
	CreatedBy           string       `json:"createdBy"`
	CreatedByName       string       `json:"createdByName"`
	CreatedAt           time.Time    `json:"createdAt"`
	Version             int          `json:"version"`
}

// InboxItem is a summary with how urgent it is.
type InboxItem struct {
	Summary
	workflowdesigner.Urgency
}

// Detail is the whole evaluation, its quotations side by side.
type Detail struct {
	Summary
	ProjectID            string                          `json:"projectId"`
	DepartmentID         *string                         `json:"departmentId"`
	Department           *Ref                            `json:"department"`
	Description          string                          `json:"description"`
	SLAWarningSent       bool                            `json:"slaWarningSent"`
	Quotations           []QuotationDTO                  `json:"quotations"`
	SelectionReason      string                          `json:"selectionReason"`
	PaymentTerms         []PaymentTerm                   `json:"paymentTerms"`
	RequiredOpinions     []string                        `json:"requiredOpinions"`
	Opinions             []OpinionDTO                    `json:"opinions"`
	History              []workflowdesigner.HistoryEntry `json:"history"`
	ApprovedAt           *time.Time                      `json:"approvedAt"`
	WorkflowDefinitionID string                          `json:"workflowDefinitionId"`
	UpdatedAt            time.Time                       `json:"updatedAt"`
	UpdatedBy            *string                         `json:"updatedBy"`
	AllowedTransitions   []workflowdesigner.AllowedMove  `json:"allowedTransitions"`
}

// QuotationDTO is one quotation, compared with the others: rank 1 is the
// cheapest, equal amounts share a rank (1, 1, 3), and the difference to
// the cheapest is given in money and in percent of the cheapest.
type QuotationDTO struct {
	ID                    string       `json:"id"`
	SupplierID            string       `json:"supplierId"`
	Supplier              *Ref         `json:"supplier"`
	Amount                money.Amount `json:"amount"`
	DeliveryDays          *int         `json:"deliveryDays"`
	WarrantyMonths        *int         `json:"warrantyMonths"`
	Notes                 string       `json:"notes"`
	Rank                  int          `json:"rank"`
	DiffToCheapest        money.Amount `json:"diffToCheapest"`
	DiffToCheapestPercent float64      `json:"diffToCheapestPercent"`
	Selected              bool         `json:"selected"`
}

// OpinionDTO is one department's opinion.
type OpinionDTO struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Verdict   string    `json:"verdict"`
	Comment   string    `json:"comment"`
	UserID    string    `json:"userId"`
	UserName  string    `json:"userName"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// CreateRequest is the body of POST /api/purchase-evaluations.
type CreateRequest struct {
	Title          string        `json:"title" validate:"required,max=300"`
	Policy         string        `json:"policy" validate:"omitempty,oneof=A B"`
	ProjectID      string        `json:"projectId" validate:"required,uuid"`
	DepartmentID   *string       `json:"departmentId" validate:"omitempty,uuid"`
	Category       *string       `json:"category" validate:"omitempty,oneof=Material Subcontract Service Equipment"`
	Description    string        `json:"description" validate:"max=4000"`
	EstimatedValue money.Amount  `json:"estimatedValue" validate:"gte=0"`
	Currency       string        `json:"currency" validate:"omitempty,len=3,uppercase"`
	PaymentTerms   []PaymentTerm `json:"paymentTerms" validate:"max=20,dive"`
}

// UpdateRequest is the body of PUT /api/purchase-evaluations/{id}; the
// policy is fixed at creation (it names the voucher code and the workflow).
type UpdateRequest struct {
	CreateRequest
	Version *int `json:"version"`
}

// QuotationRequest is the body of POST and PUT of a quotation.
type QuotationRequest struct {
	SupplierID     string       `json:"supplierId" validate:"required,uuid"`
	Amount         money.Amount `json:"amount" validate:"gt=0"`
	DeliveryDays   *int         `json:"deliveryDays" validate:"omitempty,gte=0,lte=3650"`
	WarrantyMonths *int         `json:"warrantyMonths" validate:"omitempty,gte=0,lte=600"`
	Notes          string       `json:"notes" validate:"max=2000"`
}

// WinnerRequest is the body of POST /{id}/select-winner.
type WinnerRequest struct {
	QuotationID string `json:"quotationId" validate:"required"`
	Reason      string `json:"reason" validate:"max=2000"`
}

// TransitionRequest is the body of POST /{id}/transitions.
type TransitionRequest = workflowdesigner.TransitionRequest

// OpinionRequest is the body of PUT /{id}/opinions/{kind}.
type OpinionRequest struct {
	Verdict string `json:"verdict" validate:"required,oneof=Agree AgreeWithConditions Disagree"`
	Comment string `json:"comment" validate:"max=4000"`
}

// ContractRequest is the body of POST /{id}/contract.
type ContractRequest struct {
	ContractType string `json:"contractType" validate:"required"`
}
