package core

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gabriel-vasile/mimetype"
	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/forms"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/storage"
)

// allowedTypes are the file types contracts accept, recognised by content.
var allowedTypes = map[string]string{
	"application/pdf": "pdf",
	"image/png":       "png",
	"image/jpeg":      "jpg",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":       "xlsx",
}

// Upload is a file a client sends.
type Upload struct {
	FileName string
	Size     int64
	Open     func() (io.ReadCloser, error)
}

// Rendered is a rendered template: its file and the placeholders the
// render had no value for (left in the document as {{name}}).
type Rendered struct {
	FileName, ContentType string
	Body                  []byte
	Unfilled              []string
}

// Renderer renders a form template; the forms module provides it.
type Renderer interface {
	Render(ctx context.Context, templateID string, data map[string]any) (Rendered, error)
}

// Templates tells which contract type a template is for and whether it can
// be used; the forms module provides it.
type Templates interface {
	TemplateInfo(ctx context.Context, templateID string) (forms.TemplateInfo, error)
}

func attachmentNotFound() *apperr.Error { return apperr.NotFound("Attachment") }

// AddAttachment stores a scanned signed or sealed copy. The file type is
// judged by content; the client's name is kept only as a label. The file is
// written first and removed again if the row cannot be, so neither outlives
// the other.
func (s *Service) AddAttachment(ctx context.Context, p authn.Principal, id, purpose string, up Upload, maxBytes int64) (AttachmentDTO, error) {
	c, _, err := s.visible(ctx, p, id)
	if err != nil {
		return AttachmentDTO{}, err
	}
	if purpose != PurposeScannedSigned && purpose != PurposeSealedCopy {
		return AttachmentDTO{}, apperr.FieldError("Purpose", "Must be one of: ScannedSigned, SealedCopy.")
	}
	if up.Size > maxBytes {
		return AttachmentDTO{}, httpx.TooLarge(maxBytes)
	}
	f, err := up.Open()
	if err != nil {
		return AttachmentDTO{}, apperr.FieldError("File", "The file could not be read.")
	}
	defer f.Close()
	head := make([]byte, 3072)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return AttachmentDTO{}, err
	}
	head = head[:n]
	contentType := mimetype.Detect(head).String()
	contentType, _, _ = strings.Cut(contentType, ";")
	ext, ok := allowedTypes[contentType]
	if !ok && n > 0 {
		// Office files are zips: the type shows only after reading further.
		contentType, ext, ok = detectZip(head, f, maxBytes)
	}
	if !ok {
		return AttachmentDTO{}, apperr.New(apperr.KindUnsupportedMedia, "unsupported_media_type",
			"Attach a PDF, PNG, JPEG, DOCX or XLSX file.")
	}
	reopened, err := up.Open()
	if err != nil {
		return AttachmentDTO{}, err
	}
	defer reopened.Close()
	return s.storeAttachment(ctx, p, c, purpose, storage.SanitizeFileName(up.FileName), contentType, ext, reopened, maxBytes, nil)
}

// detectZip recognises a Word or Excel file by its zip directory: the
// content-types part and the main part must both be there.
func detectZip(head []byte, rest io.Reader, maxBytes int64) (string, string, bool) {
	if !bytes.HasPrefix(head, []byte("PK")) {
		return "", "", false
	}
	all, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader(head), rest), maxBytes+1))
	if err != nil {
		return "", "", false
	}
	zr, err := zip.NewReader(bytes.NewReader(all), int64(len(all)))
	if err != nil {
		return "", "", false
	}
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
	}
	switch {
	case !names["[Content_Types].xml"]:
		return "", "", false
	case names["word/document.xml"]:
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "docx", true
	case names["xl/workbook.xml"]:
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx", true
	}
	return "", "", false
}

func (s *Service) storeAttachment(ctx context.Context, p authn.Principal, c *Contract, purpose, fileName, contentType, ext string,
	r io.Reader, maxBytes int64, unfilled []string) (AttachmentDTO, error) {
	if unfilled == nil {
		unfilled = []string{}
	}
	unfilledJSON, err := json.Marshal(unfilled)
	if err != nil {
		return AttachmentDTO{}, err
	}
	now := s.now()
	key := storage.NewKey("contracts/"+c.ID, now, ext)
	size, err := s.Blobs.Put(ctx, key, r, maxBytes)
	if err == storage.ErrTooLarge {
		return AttachmentDTO{}, httpx.TooLarge(maxBytes)
	}
	if err != nil {
		return AttachmentDTO{}, err
	}
	a := Attachment{ID: uuid.Must(uuid.NewV7()).String(), ContractID: c.ID, FileName: fileName, StoragePath: key,
		Purpose: purpose, Size: size, ContentType: contentType, UploadedBy: p.UserID, CreatedAt: now,
		UnfilledPlaceholders: string(unfilledJSON)}
	if err := s.DB.InTx(ctx, func(ctx context.Context) error { return s.store.insert(ctx, &a) }); err != nil {
		if derr := s.Blobs.Delete(context.WithoutCancel(ctx), key); derr != nil {
			s.Log.Error("remove file of failed attachment", "key", key, "err", derr)
		}
		return AttachmentDTO{}, err
	}
	return attachmentDTO(a, map[string]string{p.UserID: p.Name}), nil
}

// OpenAttachment returns an attachment's metadata and content.
func (s *Service) OpenAttachment(ctx context.Context, p authn.Principal, id, attachmentID string) (Attachment, io.ReadCloser, error) {
	c, _, err := s.visible(ctx, p, id)
	if err != nil {
		return Attachment{}, nil, err
	}
	a, err := s.findAttachment(ctx, c.ID, attachmentID)
	if err != nil {
		return Attachment{}, nil, err
	}
	f, err := s.Blobs.Open(ctx, a.StoragePath)
	if err == storage.ErrNotFound {
		return Attachment{}, nil, apperr.NotFound("The attachment's file")
	}
	return *a, f, err
}

func (s *Service) findAttachment(ctx context.Context, contractID, id string) (*Attachment, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, attachmentNotFound()
	}
	a, err := s.store.attachment(ctx, contractID, id)
	if db.IsNotFound(err) {
		return nil, attachmentNotFound()
	}
	return a, err
}

// DeleteAttachment removes an attachment: by its uploader or Admin, and not
// once the contract is published. The file goes after the row commits.
func (s *Service) DeleteAttachment(ctx context.Context, p authn.Principal, id, attachmentID string) error {
	c, _, err := s.visible(ctx, p, id)
	if err != nil {
		return err
	}
	a, err := s.findAttachment(ctx, c.ID, attachmentID)
	if err != nil {
		return err
	}
	if !p.IsAdmin() && a.UploadedBy != p.UserID {
		return apperr.Forbidden("Only the uploader or an administrator may delete an attachment.")
	}
	if c.Phase == DaPhatHanh {
		return apperr.Conflict("not_deletable", "Attachments of a published contract are kept.")
	}
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.deleteAttachment(ctx, a.ID); err != nil {
			return err
		}
		db.AfterCommit(ctx, func() {
			if err := s.Blobs.Delete(context.WithoutCancel(ctx), a.StoragePath); err != nil {
				s.Log.Error("remove attachment file", "key", a.StoragePath, "err", err)
			}
		})
		return nil
	})
}

// DraftExport renders the contract's template with its draft data and the
// contract's facts, and keeps the result as a DraftExport attachment. The
// placeholders the render could not fill stay in the document as {{name}}
// and are kept with the attachment (unfilledPlaceholders), so the drafter
// learns what to fill before exporting again.
func (s *Service) DraftExport(ctx context.Context, p authn.Principal, id string, maxBytes int64) (AttachmentDTO, error) {
	c, _, err := s.visible(ctx, p, id)
	if err != nil {
		return AttachmentDTO{}, err
	}
	if s.Renderer == nil {
		return AttachmentDTO{}, apperr.NotFound("Templates (the forms module is switched off)")
	}
	if c.TemplateID == nil {
		return AttachmentDTO{}, apperr.Conflict("not_editable", "The contract has no template; set templateId first.")
	}
	data, err := s.exportData(ctx, c)
	if err != nil {
		return AttachmentDTO{}, err
	}
	doc, err := s.Renderer.Render(ctx, *c.TemplateID, data)
	if err != nil {
		return AttachmentDTO{}, err
	}
	ext := "docx"
	if strings.Contains(doc.ContentType, "spreadsheet") {
		ext = "xlsx"
	}
	return s.storeAttachment(ctx, p, c, PurposeDraftExport, storage.SanitizeFileName(doc.FileName), doc.ContentType, ext,
		bytes.NewReader(doc.Body), maxBytes, doc.Unfilled)
}

// exportData is the draft data overlaid with the facts the contract and
// its supplier and project records hold. Every fact a record holds wins
// over a same-named draft field, so a draft can never name one company as
// party B and give another's tax code or bank account; draft data fills
// only what a record leaves empty. The facts go under the placeholder names
// the templates share (forms.Field…) and under the contract's own property
// names. A supplier or project that cannot be looked up fails the export:
// a document with half the facts missing is worse than none.
func (s *Service) exportData(ctx context.Context, c *Contract) (map[string]any, error) {
	data := map[string]any{}
	if err := json.Unmarshal([]byte(c.DraftData), &data); err != nil {
		return nil, fmt.Errorf("draft data of %s: %w", c.ID, err)
	}
	// set writes a record's fact; an empty one leaves the draft's value.
	set := func(key, value string) {
		if value != "" {
			data[key] = value
		}
	}
	data["title"] = c.Title
	data["contractType"] = c.ContractType
	// The exact amount: its String() is a plain decimal, which the renderer takes.
	data["value"], data[forms.FieldContractValue] = c.Value, c.Value
	data["currency"] = c.Currency
	if c.MaHopDong != nil {
		data["maHopDong"], data[forms.FieldContractCode] = *c.MaHopDong, *c.MaHopDong
	}
	sup, err := s.MasterData.SupplierParty(ctx, c.SupplierID)
	if err != nil {
		return nil, exportLookupError("supplier", err)
	}
	set("supplierCode", sup.Code)
	set("supplierName", sup.Name)
	set(forms.FieldPartyBName, sup.Name)
	set(forms.FieldPartyBTaxCode, sup.TaxCode)
	set(forms.FieldPartyBAddress, sup.Address)
	set(forms.FieldPartyBRepresentative, sup.ContactPerson)
	set(forms.FieldPartyBBankAccount, sup.BankAccount)
	set(forms.FieldPartyBBankName, sup.BankName)
	if c.ProjectID != nil {
		pr, err := s.MasterData.ProjectSite(ctx, *c.ProjectID)
		if err != nil {
			return nil, exportLookupError("project", err)
		}
		set(forms.FieldProjectCode, pr.Code)
		set(forms.FieldProjectName, pr.Name)
		set(forms.FieldProjectLocation, pr.Location)
	}
	for k, v := range map[string]*string{"startDate": c.StartDate, "endDate": c.EndDate} {
		if v != nil {
			data[k] = *v
		}
	}
	return data, nil
}

// exportLookupError turns a failed supplier or project lookup into the
// export's answer: a record deleted since the contract was drafted is a
// state the drafter can fix (409); anything else is the server's fault.
func exportLookupError(what string, err error) error {
	if apperr.KindOf(err) == apperr.KindNotFound {
		return apperr.Conflict("not_editable", fmt.Sprintf("The contract's %s no longer exists; choose another %[1]s before exporting.", what))
	}
	return fmt.Errorf("draft export: look up the %s: %w", what, err)
}
