package core

import (
	"time"

	"github.com/contractflow/contractflow/platform/money"
)

// Contract is one contract. Value counts hundredths of the currency unit
// (platform/money) so sums stay exact on both databases.
type Contract struct {
	ID                      string
	Title                   string
	ContractType            string
	TemplateID              *string
	SupplierID              string
	ProjectID               *string
	DepartmentID            *string
	Value                   money.Amount
	Currency                string
	BypassProcurementAndCCM bool `gorm:"column:bypass_procurement_and_ccm"`
	Phase                   string
	SLADeadline             *time.Time `gorm:"column:sla_deadline"`
	SLAWarningSent          bool       `gorm:"column:sla_warning_sent"`
	MaHopDong               *string
	SearchText              string // title and code, folded (platform/search)
	DraftData               string
	DrafterID               string
	WorkflowDefinitionID    string
	HistoryHash             string // head of the hash-chained approvals (workflow runtime)
	PurchaseEvaluationID    *string
	BudgetLineID            *string
	Description             string
	StartDate               *string
	EndDate                 *string
	Version                 int
	CreatedAt               time.Time
	CreatedBy               *string
	UpdatedAt               time.Time
	UpdatedBy               *string
	DeletedAt               *time.Time
	DeletedBy               *string
}

func (Contract) TableName() string { return "contracts" }

// Comment is one message of a contract's thread.
type Comment struct {
	ID         string
	ContractID string
	Phase      string
	Content    string
	AuthorID   string
	CreatedAt  time.Time
}

func (Comment) TableName() string { return "contract_comments" }

// Attachment is a stored file of a contract.
type Attachment struct {
	ID          string
	ContractID  string
	FileName    string
	StoragePath string
	Purpose     string
	Size        int64
	ContentType string
	UploadedBy  string
	CreatedAt   time.Time
	// UnfilledPlaceholders is a JSON array of the placeholder names a draft
	// export left as {{name}}; "[]" for every other attachment.
	UnfilledPlaceholders string
}

func (Attachment) TableName() string { return "contract_attachments" }

// Attachment purposes (seed §2.5).
const (
	PurposeDraftExport   = "DraftExport"
	PurposeScannedSigned = "ScannedSigned"
	PurposeSealedCopy    = "SealedCopy"
)
