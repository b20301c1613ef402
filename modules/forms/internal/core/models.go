package core

import "time"

// Template is one row of contract_templates: a contract template file in
// blob storage and what a form needs to fill it.
type Template struct {
	ID           string
	FormCode     string // unique, upper case, e.g. "HDTP-01"
	Name         string
	ContractType string // a contract type name, e.g. "Subcontract"
	FileName     string // the name the file is offered under
	StoragePath  string // the blob key; empty when no file was ever stored
	Format       string // docx | xlsx
	FieldSpec    string // JSON array of render.Field
	IsActive     bool   // as set by an administrator (or false when seeded without its file)
	Version      int
	CreatedAt    time.Time
	CreatedBy    *string
	UpdatedAt    time.Time
	UpdatedBy    *string
}

func (Template) TableName() string { return "contract_templates" }
