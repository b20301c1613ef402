// Package forms is the public contract of the forms module: contract
// templates (Word and Excel files with {{placeholders}}) and the renderer
// that fills them. Other modules obtain the interfaces with
// kernel.Need[forms.Renderer] / kernel.Need[forms.Templates] and must
// declare "forms" in their Info.Requires.
package forms

import (
	"context"

	"github.com/contractflow/contractflow/modules/forms/internal/core"
	"github.com/contractflow/contractflow/modules/forms/internal/render"
)

// Renderer fills a template with data. The contracts module's draft export
// calls it with the contract's draftData merged with the contract's facts
// (see the Field… names below).
type Renderer interface {
	// RenderTemplate renders the template templateID with data, a map of
	// placeholder name → value. Values may be strings, numbers (float64,
	// ints, json.Number, or a decimal type whose String() is a plain
	// decimal), time.Time for date fields, or nil (= not given).
	//
	// Fields of the template's fieldSpec are checked: required ones must be
	// present and not blank, number and money take numbers or numeric
	// strings, date takes "YYYY-MM-DD" or a time.Time, text at most 10 000
	// characters. Keys outside the fieldSpec are written as text when they
	// are strings or numbers and ignored otherwise (booleans, objects,
	// arrays), so free-form draftData can be passed as it is. Placeholders
	// without a value stay in the document as {{name}} and are listed in
	// the Document's Unfilled.
	//
	// Errors are apperr errors: NotFound (unknown template), Validation with
	// Fields keyed by PascalCase placeholder name ("PartyBName"), Conflict
	// "template_inactive" (switched off) or "template_file_missing" (its file
	// is gone from storage); anything else is internal.
	RenderTemplate(ctx context.Context, templateID string, data map[string]any) (Document, error)
}

// Templates looks templates up, e.g. to check the templateId of a new
// contract. Unknown ids answer an apperr NotFound.
type Templates interface {
	TemplateInfo(ctx context.Context, templateID string) (TemplateInfo, error)
}

// Document is a rendered template: a suggested file name (UTF-8, safe for a
// Content-Disposition header), the docx or xlsx media type, and the bytes.
type Document = core.Document

// TemplateInfo describes a template: id, form code, name, contract type,
// format ("docx" | "xlsx"), its fields, and whether it can be rendered now
// (switched on and its file in storage).
type TemplateInfo = core.TemplateInfo

// Field is one entry of a template's fieldSpec.
type Field = render.Field

// FieldType is the type of a field's value.
type FieldType = render.FieldType

// The field types.
const (
	FieldText   = render.Text
	FieldNumber = render.Number
	FieldMoney  = render.Money
	FieldDate   = render.Date
)

// ContractTypes are the contract types a template can be for (DESIGN §5
// JSON names).
func ContractTypes() []string { return append([]string(nil), core.ContractTypes...) }

// Placeholder names the seeded contract templates share. The draft export
// fills them from the contract's facts; draftData fills the rest.
const (
	FieldContractCode         = "contractCode"         // MaHopDong, once generated
	FieldContractDate         = "contractDate"         // date
	FieldContractValue        = "contractValue"        // money
	FieldContractValueInWords = "contractValueInWords" // text
	FieldPartyAName           = "partyAName"           // the company itself
	FieldPartyBName           = "partyBName"           // the supplier's name
	FieldPartyBAddress        = "partyBAddress"
	FieldPartyBTaxCode        = "partyBTaxCode"
	FieldPartyBRepresentative = "partyBRepresentative" // the supplier's contact person
	FieldPartyBBankAccount    = "partyBBankAccount"
	FieldPartyBBankName       = "partyBBankName"
	FieldProjectName          = "projectName"
	FieldProjectCode          = "projectCode"
	FieldProjectLocation      = "projectLocation"
	FieldStartDate            = "startDate" // date
	FieldEndDate              = "endDate"   // date
)
