package core

import (
	"time"

	"github.com/contractflow/contractflow/modules/forms/internal/render"
)

// TemplateDTO is a template as the API shows it. IsActive is true only when
// the template is switched on and its file is in storage; FileAvailable
// tells the two reasons apart.
type TemplateDTO struct {
	ID            string         `json:"id"`
	FormCode      string         `json:"formCode"`
	Name          string         `json:"name"`
	ContractType  string         `json:"contractType"`
	FileName      string         `json:"fileName"`
	StoragePath   string         `json:"storagePath"`
	Format        string         `json:"format"`
	FieldSpec     []render.Field `json:"fieldSpec"`
	IsActive      bool           `json:"isActive"`
	FileAvailable bool           `json:"fileAvailable"`
	Version       int            `json:"version"`
	CreatedAt     time.Time      `json:"createdAt"`
	CreatedBy     *string        `json:"createdBy"`
	UpdatedAt     time.Time      `json:"updatedAt"`
	UpdatedBy     *string        `json:"updatedBy"`
}

// TemplateDetail is one template as GET /api/forms/templates/{id} shows
// it: the template and the placeholders found in its file (sorted, each
// once; empty when the file is missing), so a drafter can see what a render
// will fill and what it will leave as {{name}}.
type TemplateDetail struct {
	TemplateDTO
	Placeholders []string `json:"placeholders"`
}

// UploadResult answers an upload or a file replacement: the template, the
// placeholders found in the file, and how they compare with its fieldSpec.
type UploadResult struct {
	Template        TemplateDTO `json:"template"`
	Placeholders    []string    `json:"placeholders"`
	MissingFromSpec []string    `json:"missingFromSpec"` // in the file, not in the fieldSpec
	UnusedInSpec    []string    `json:"unusedInSpec"`    // in the fieldSpec, not in the file
}

// UpdateRequest replaces a template's metadata (PUT semantics: every field
// but version is required; the service checks them).
type UpdateRequest struct {
	FormCode     string         `json:"formCode"`
	Name         string         `json:"name"`
	ContractType string         `json:"contractType"`
	FieldSpec    []render.Field `json:"fieldSpec"`
	IsActive     *bool          `json:"isActive"`
	Version      *int           `json:"version"`
}

// UploadInput is a new template: metadata from the form and the file.
type UploadInput struct {
	FormCode     string
	Name         string
	ContractType string
	FieldSpec    *string // JSON array; nil = one text field per placeholder of the file
	FileName     string
	Data         []byte
}

// Document is a rendered template, ready to send or to store.
type Document struct {
	FileName    string // suggested download name, e.g. "HDTP-01 Hợp đồng thầu phụ thi công xây dựng.docx"
	ContentType string // the docx or xlsx media type
	Body        []byte
	// Unfilled are the placeholders of the template that the render had no
	// value for, sorted, each once; they stay in the document as {{name}}.
	// Never nil.
	Unfilled []string
}

// TemplateInfo is what other modules learn about a template.
type TemplateInfo struct {
	ID           string
	FormCode     string
	Name         string
	ContractType string
	Format       string // docx | xlsx
	Fields       []render.Field
	IsActive     bool // switched on and its file is in storage
}
