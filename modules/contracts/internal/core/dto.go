package core

import (
	"encoding/json"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/money"
)

// Ref names a master-data record.
type Ref struct {
	ID   string `json:"id"`
	Code string `json:"code"`
	Name string `json:"name"`
}

// Summary is a contract as lists and the inbox show it.
type Summary struct {
	ID                      string       `json:"id"`
	Title                   string       `json:"title"`
	ContractType            string       `json:"contractType"`
	Phase                   string       `json:"phase"`
	MaHopDong               *string      `json:"maHopDong"`
	Supplier                *Ref         `json:"supplier"`
	Project                 *Ref         `json:"project"`
	Value                   money.Amount `json:"value"`
	Currency                string       `json:"currency"`
	BypassProcurementAndCCM bool         `json:"bypassProcurementAndCCM"`
	SLADeadline             *time.Time   `json:"slaDeadline"`
	DrafterID               string       `json:"drafterId"`
	DrafterName             string       `json:"drafterName"`
	CreatedAt               time.Time    `json:"createdAt"`
	Version                 int          `json:"version"`
}

// InboxItem is a summary with how urgent it is.
type InboxItem struct {
	Summary
	workflowdesigner.Urgency
}

// Detail is the whole contract.
type Detail struct {
	Summary
	TemplateID           *string                         `json:"templateId"`
	SupplierID           string                          `json:"supplierId"`
	ProjectID            *string                         `json:"projectId"`
	DepartmentID         *string                         `json:"departmentId"`
	SLAWarningSent       bool                            `json:"slaWarningSent"`
	DraftData            json.RawMessage                 `json:"draftData"`
	WorkflowDefinitionID string                          `json:"workflowDefinitionId"`
	PurchaseEvaluationID *string                         `json:"purchaseEvaluationId"`
	BudgetLineID         *string                         `json:"budgetLineId"`
	Description          string                          `json:"description"`
	StartDate            *string                         `json:"startDate"`
	EndDate              *string                         `json:"endDate"`
	CreatedBy            *string                         `json:"createdBy"`
	UpdatedAt            time.Time                       `json:"updatedAt"`
	UpdatedBy            *string                         `json:"updatedBy"`
	Approvals            []workflowdesigner.HistoryEntry `json:"approvals"`
	Comments             []CommentDTO                    `json:"comments"`
	Attachments          []AttachmentDTO                 `json:"attachments"`
	AllowedTransitions   []workflowdesigner.AllowedMove  `json:"allowedTransitions"`
	// Warnings are only in the answer to a transition (workflow hooks').
	Warnings []string `json:"warnings,omitempty"`
}

// CommentDTO is one comment.
type CommentDTO struct {
	ID         string    `json:"id"`
	Phase      string    `json:"phase"`
	Content    string    `json:"content"`
	AuthorID   string    `json:"authorId"`
	AuthorName string    `json:"authorName"`
	CreatedAt  time.Time `json:"createdAt"`
}

// AttachmentDTO describes a stored file.
type AttachmentDTO struct {
	ID             string    `json:"id"`
	FileName       string    `json:"fileName"`
	Purpose        string    `json:"purpose"`
	Size           int64     `json:"size"`
	ContentType    string    `json:"contentType"`
	UploadedBy     string    `json:"uploadedBy"`
	UploadedByName string    `json:"uploadedByName"`
	CreatedAt      time.Time `json:"createdAt"`
	// UnfilledPlaceholders are the placeholders a draft export had no value
	// for (they stay in the document as {{name}}); empty for other files.
	UnfilledPlaceholders []string `json:"unfilledPlaceholders"`
}

// CreateRequest is the body of POST /api/contracts.
type CreateRequest struct {
	Title                   string          `json:"title" validate:"required,max=300"`
	ContractType            string          `json:"contractType" validate:"required,oneof=Subcontract PieceWork Supply Service Purchase FrameworkSupply FrameworkSubcontract"`
	TemplateID              *string         `json:"templateId" validate:"omitempty,uuid"`
	SupplierID              string          `json:"supplierId" validate:"required,uuid"`
	ProjectID               *string         `json:"projectId" validate:"omitempty,uuid"`
	DepartmentID            *string         `json:"departmentId" validate:"omitempty,uuid"`
	Value                   money.Amount    `json:"value" validate:"gt=0"`
	Currency                string          `json:"currency" validate:"omitempty,len=3,uppercase"`
	BypassProcurementAndCCM bool            `json:"bypassProcurementAndCCM"`
	DraftData               json.RawMessage `json:"draftData"`
	PurchaseEvaluationID    *string         `json:"purchaseEvaluationId" validate:"omitempty,uuid"`
	BudgetLineID            *string         `json:"budgetLineId" validate:"omitempty,uuid"`
	Description             string          `json:"description" validate:"max=4000"`
	StartDate               *string         `json:"startDate" validate:"omitempty,datetime=2006-01-02"`
	EndDate                 *string         `json:"endDate" validate:"omitempty,datetime=2006-01-02"`
}

// UpdateRequest is the body of PUT /api/contracts/{id}: the draft data, and
// the other drafting fields, while the contract is in DangSoanThao.
type UpdateRequest struct {
	CreateRequest
	Version *int `json:"version"`
}

// TransitionRequest is the body of POST /api/contracts/{id}/transitions.
type TransitionRequest = workflowdesigner.TransitionRequest

// CommentRequest is the body of POST /api/contracts/{id}/comments.
type CommentRequest struct {
	Content string `json:"content" validate:"required,max=4000"`
}
