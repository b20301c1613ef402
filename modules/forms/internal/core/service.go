// Package core implements the forms module: contract templates kept in
// blob storage, their metadata, uploads that are checked to really be Word
// or Excel files, and rendering with placeholder values.
package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/forms/internal/render"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/storage"
)

// ContractTypes are the contract types' JSON names (DESIGN §5). The forms
// module keeps its own copy because the contracts module requires forms,
// not the other way round.
var ContractTypes = []string{"Subcontract", "PieceWork", "Supply", "Service", "Purchase", "FrameworkSupply", "FrameworkSubcontract"}

// blobPrefix is where template files live in blob storage.
const blobPrefix = "templates"

// MaxFields bounds a fieldSpec.
const MaxFields = 200

// Service holds the module's behaviour; handlers and other modules call it.
type Service struct {
	db       *db.DB
	store    *store
	blobs    storage.Blobs
	clock    clock.Clock
	log      *slog.Logger
	maxBytes int64 // uploads.maxBytes
	limits   render.Limits
}

// New builds the service from the kernel's shared infrastructure.
func New(app *kernel.App) *Service {
	return &Service{
		db:       app.DB,
		store:    &store{db: app.DB},
		blobs:    app.Blobs,
		clock:    app.Clock,
		log:      app.Log,
		maxBytes: int64(app.Config.Uploads.MaxBytes),
		limits:   render.DefaultLimits,
	}
}

// MaxUploadBytes is the largest template file accepted.
func (s *Service) MaxUploadBytes() int64 { return s.maxBytes }

func (s *Service) now() time.Time { return s.clock.Now() }

func (s *Service) find(ctx context.Context, id string) (*Template, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, apperr.NotFound("Template")
	}
	t, err := s.store.byID(ctx, id)
	if db.IsNotFound(err) {
		return nil, apperr.NotFound("Template")
	}
	if err != nil {
		return nil, fmt.Errorf("load template %s: %w", id, err)
	}
	return t, nil
}

// available reports whether the template's file is in storage.
func (s *Service) available(ctx context.Context, t *Template) (bool, error) {
	if t.StoragePath == "" {
		return false, nil
	}
	ok, err := s.blobs.Exists(ctx, t.StoragePath)
	if err != nil {
		return false, fmt.Errorf("template %s: look for file %s: %w", t.ID, t.StoragePath, err)
	}
	return ok, nil
}

func decodeSpec(t *Template) ([]render.Field, error) {
	spec := []render.Field{}
	if err := json.Unmarshal([]byte(t.FieldSpec), &spec); err != nil {
		return nil, fmt.Errorf("template %s: stored fieldSpec: %w", t.ID, err)
	}
	return spec, nil
}

func (s *Service) dto(t *Template, available bool) (TemplateDTO, error) {
	spec, err := decodeSpec(t)
	if err != nil {
		return TemplateDTO{}, err
	}
	return TemplateDTO{
		ID: t.ID, FormCode: t.FormCode, Name: t.Name, ContractType: t.ContractType, FileName: t.FileName,
		StoragePath: t.StoragePath, Format: t.Format, FieldSpec: spec, IsActive: t.IsActive && available,
		FileAvailable: available, Version: t.Version, CreatedAt: t.CreatedAt.UTC(), CreatedBy: t.CreatedBy,
		UpdatedAt: t.UpdatedAt.UTC(), UpdatedBy: t.UpdatedBy,
	}, nil
}

func (s *Service) loadDTO(ctx context.Context, t *Template) (TemplateDTO, error) {
	ok, err := s.available(ctx, t)
	if err != nil {
		return TemplateDTO{}, err
	}
	return s.dto(t, ok)
}

// TemplateSpec is the list whitelist of templates.
var TemplateSpec = paging.Spec{
	Sort: map[string]string{"formCode": "form_code", "name": "name", "contractType": "contract_type",
		"createdAt": "created_at", "updatedAt": "updated_at"},
	DefaultSort: "formCode",
}

// Filter narrows the template list.
type Filter struct {
	ContractType string // canonical name or ""
	OnlyActive   bool   // switched on and with their file in storage
}

// List returns one page of templates. With OnlyActive the file check decides
// membership, so the matching rows are checked before paging (templates are
// a short list: tens, not thousands).
func (s *Service) List(ctx context.Context, f Filter, req paging.Request) (paging.Page[TemplateDTO], error) {
	sf := filter{Search: req.Search, ContractType: f.ContractType, OnlyActive: f.OnlyActive}
	var rows []Template
	var total int64
	if f.OnlyActive {
		all, err := s.store.all(ctx, sf, req)
		if err != nil {
			return paging.Page[TemplateDTO]{}, err
		}
		var live []Template
		for i := range all {
			ok, err := s.available(ctx, &all[i])
			if err != nil {
				return paging.Page[TemplateDTO]{}, err
			}
			if ok {
				live = append(live, all[i])
			}
		}
		total = int64(len(live))
		from := min(req.Offset(), len(live))
		rows = live[from:min(from+req.PageSize, len(live))]
	} else {
		var err error
		if rows, total, err = s.store.page(ctx, sf, req); err != nil {
			return paging.Page[TemplateDTO]{}, err
		}
	}
	items := make([]TemplateDTO, 0, len(rows))
	for i := range rows {
		d, err := s.loadDTO(ctx, &rows[i])
		if err != nil {
			return paging.Page[TemplateDTO]{}, err
		}
		items = append(items, d)
	}
	return paging.NewPage(items, req, total), nil
}

// Get returns one template.
func (s *Service) Get(ctx context.Context, id string) (TemplateDTO, error) {
	t, err := s.find(ctx, id)
	if err != nil {
		return TemplateDTO{}, err
	}
	return s.loadDTO(ctx, t)
}

// GetDetail returns one template with the placeholders of its file. The
// file is read and inspected on every call (templates are few and read
// rarely); a missing file lists none.
func (s *Service) GetDetail(ctx context.Context, id string) (TemplateDetail, error) {
	t, err := s.find(ctx, id)
	if err != nil {
		return TemplateDetail{}, err
	}
	d, err := s.loadDTO(ctx, t)
	if err != nil {
		return TemplateDetail{}, err
	}
	out := TemplateDetail{TemplateDTO: d, Placeholders: []string{}}
	if !d.FileAvailable {
		return out, nil
	}
	file, err := s.readFile(ctx, t)
	if err != nil {
		return TemplateDetail{}, err
	}
	info, err := render.Inspect(file, s.limits)
	if err != nil {
		// The file passed the same check when it was stored.
		return TemplateDetail{}, apperr.Internal(fmt.Errorf("inspect template %s (%s): %w", t.ID, t.StoragePath, err))
	}
	if info.Placeholders != nil {
		out.Placeholders = info.Placeholders
	}
	return out, nil
}

// TemplateInfo describes a template for another module.
func (s *Service) TemplateInfo(ctx context.Context, id string) (TemplateInfo, error) {
	t, err := s.find(ctx, id)
	if err != nil {
		return TemplateInfo{}, err
	}
	d, err := s.loadDTO(ctx, t)
	if err != nil {
		return TemplateInfo{}, err
	}
	return TemplateInfo{ID: d.ID, FormCode: d.FormCode, Name: d.Name, ContractType: d.ContractType,
		Format: d.Format, Fields: d.FieldSpec, IsActive: d.IsActive}, nil
}

// RenderTemplate fills a template with data (placeholder name → value). The
// order of checks is the API's: unknown template (404), invalid values
// (400 with errors keyed by field), then state: switched off or file
// missing (409).
func (s *Service) RenderTemplate(ctx context.Context, id string, data map[string]any) (Document, error) {
	var unfilled []string
	t, err := s.find(ctx, id)
	if err != nil {
		return Document{}, err
	}
	spec, err := decodeSpec(t)
	if err != nil {
		return Document{}, err
	}
	vals, err := render.Prepare(spec, data)
	if err != nil {
		return Document{}, err
	}
	if !t.IsActive {
		return Document{}, apperr.Conflict("template_inactive",
			fmt.Sprintf("The template %s is switched off; switch it on or choose another template.", t.FormCode))
	}
	file, err := s.readFile(ctx, t)
	if err != nil {
		return Document{}, err
	}
	out, format, err := render.Render(file, vals, s.limits)
	if err == nil {
		var info render.Info
		if info, err = render.Inspect(file, s.limits); err == nil {
			unfilled = unfilledOf(info.Placeholders, vals)
		}
	}
	if err != nil {
		// The file passed the same checks when it was stored: if it fails
		// now, storage holds something else, which is ours to fix.
		return Document{}, apperr.Internal(fmt.Errorf("render template %s (%s): %w", t.ID, t.StoragePath, err))
	}
	return Document{FileName: downloadName(t, format), ContentType: format.ContentType(), Body: out, Unfilled: unfilled}, nil
}

// unfilledOf lists the placeholders (sorted, each once) that vals has no
// value for: the render leaves them visible as {{name}}, the one behaviour
// for an unfilled placeholder (docs/decisions.md, issue 18).
func unfilledOf(placeholders []string, vals render.Values) []string {
	out := []string{}
	for _, p := range placeholders {
		if _, ok := vals[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// TemplateFile is the stored file of a template, as it was uploaded or
// seeded, so an administrator can correct it in Word or Excel and upload it
// back with PUT …/file. It answers whether or not the template is active.
func (s *Service) TemplateFile(ctx context.Context, id string) (Document, error) {
	t, err := s.find(ctx, id)
	if err != nil {
		return Document{}, err
	}
	file, err := s.readFile(ctx, t)
	if err != nil {
		return Document{}, err
	}
	format := render.Format(t.Format)
	name := t.FileName
	if name == "" {
		name = downloadName(t, format)
	}
	return Document{FileName: storage.SanitizeFileName(name), ContentType: format.ContentType(), Body: file}, nil
}

func fileMissing(t *Template) error {
	return apperr.Conflict("template_file_missing",
		fmt.Sprintf("The file of template %s is missing from storage; upload it again (PUT /api/forms/templates/%s/file).", t.FormCode, t.ID))
}

func (s *Service) readFile(ctx context.Context, t *Template) ([]byte, error) {
	if t.StoragePath == "" {
		return nil, fileMissing(t)
	}
	rc, err := s.blobs.Open(ctx, t.StoragePath)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fileMissing(t)
	}
	if err != nil {
		return nil, fmt.Errorf("template %s: open %s: %w", t.ID, t.StoragePath, err)
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, max(s.maxBytes, s.limits.MaxTotalBytes)))
}

// downloadName is "<form code> <name>.<ext>", safe for a header.
func downloadName(t *Template, f render.Format) string {
	return storage.SanitizeFileName(t.FormCode + " " + t.Name + "." + string(f))
}

var formCodeRe = regexp.MustCompile(`^[A-Z0-9][A-Z0-9_-]{1,31}$`)

// CanonicalContractType returns the contract type's canonical name, matching
// case-insensitively.
func CanonicalContractType(s string) (string, bool) {
	for _, ct := range ContractTypes {
		if strings.EqualFold(ct, strings.TrimSpace(s)) {
			return ct, true
		}
	}
	return "", false
}

func contractTypeMessage() string {
	return "Must be one of: " + strings.Join(ContractTypes, ", ") + "."
}

// meta is validated metadata.
type meta struct {
	formCode, name, contractType string
}

func checkMeta(fields apperr.Fields, formCode, name, contractType string) meta {
	m := meta{formCode: strings.ToUpper(strings.TrimSpace(formCode)), name: strings.TrimSpace(name)}
	switch {
	case m.formCode == "":
		fields.Add("FormCode", "Is required.")
	case !formCodeRe.MatchString(m.formCode):
		fields.Add("FormCode", "Must be 2 to 32 letters, digits, '-' or '_'.")
	}
	switch n := len([]rune(m.name)); {
	case n == 0:
		fields.Add("Name", "Is required.")
	case n > 200:
		fields.Add("Name", "Must be at most 200 characters long.")
	}
	if strings.TrimSpace(contractType) == "" {
		fields.Add("ContractType", "Is required.")
	} else if ct, ok := CanonicalContractType(contractType); ok {
		m.contractType = ct
	} else {
		fields.Add("ContractType", contractTypeMessage())
	}
	return m
}

// checkSpec validates a fieldSpec and fills defaults: the label is the
// name, the type text.
func checkSpec(fields apperr.Fields, spec []render.Field) []render.Field {
	if len(spec) > MaxFields {
		fields.Add("FieldSpec", fmt.Sprintf("Must hold at most %d fields.", MaxFields))
		return nil
	}
	out := make([]render.Field, len(spec))
	seen := map[string]bool{}
	for i, f := range spec {
		key := fmt.Sprintf("FieldSpec[%d]", i)
		f.Name = strings.TrimSpace(f.Name)
		f.Label = strings.TrimSpace(f.Label)
		switch {
		case !render.ValidName(f.Name):
			fields.Add(key+".Name", "Must be a placeholder name: a letter or '_', then letters, digits, '_', '.' or '-' (at most 64).")
		case seen[strings.ToLower(f.Name)]:
			fields.Add(key+".Name", fmt.Sprintf("The field %q is listed twice.", f.Name))
		}
		seen[strings.ToLower(f.Name)] = true
		if f.Label == "" {
			f.Label = f.Name
		}
		if len([]rune(f.Label)) > 200 {
			fields.Add(key+".Label", "Must be at most 200 characters long.")
		}
		if f.Type == "" {
			f.Type = render.Text
		}
		if !slices.Contains(render.FieldTypes, f.Type) {
			fields.Add(key+".Type", "Must be one of: text, number, money, date.")
		}
		out[i] = f
	}
	return out
}

// compare lists placeholders of the file missing from the spec and fields
// of the spec the file does not use.
func compare(placeholders []string, spec []render.Field) (missing, unused []string) {
	missing, unused = []string{}, []string{}
	inSpec := map[string]bool{}
	for _, f := range spec {
		inSpec[f.Name] = true
		if !slices.Contains(placeholders, f.Name) {
			unused = append(unused, f.Name)
		}
	}
	for _, p := range placeholders {
		if !inSpec[p] {
			missing = append(missing, p)
		}
	}
	return missing, unused
}

// fileName keeps the client's name, made safe, ending in the extension of
// what the file really is: "Mẫu.DOCX" → "Mẫu.docx", "bang-gia.bin" →
// "bang-gia.bin.xlsx".
func fileName(client string, f render.Format) string {
	name := storage.SanitizeFileName(client)
	if ext := path.Ext(name); strings.EqualFold(ext, "."+string(f)) {
		name = strings.TrimSuffix(name, ext)
	}
	return name + "." + string(f)
}

func inspect(data []byte, lim render.Limits) (render.Info, error) {
	if len(data) == 0 {
		return render.Info{}, apperr.FieldError("File", "The file is empty.")
	}
	return render.Inspect(data, lim)
}

func specJSON(spec []render.Field) string {
	b, _ := json.Marshal(spec)
	return string(b)
}

func duplicateCode(code string) error {
	return apperr.Conflict("duplicate_code", fmt.Sprintf("A template with the form code %s already exists.", code))
}

func staleVersion() error {
	return apperr.Conflict("stale_version", "The template was changed by someone else; reload it and try again.")
}

// Create stores a new template. Nothing is written unless everything is
// valid; the file is stored first and removed again if the row cannot be.
func (s *Service) Create(ctx context.Context, actor authn.Principal, in UploadInput) (UploadResult, error) {
	info, err := inspect(in.Data, s.limits)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.KindUnsupportedMedia {
		return UploadResult{}, err
	}
	fields := apperr.Fields{}
	if e, ok := apperr.As(err); ok && e.Kind == apperr.KindValidation {
		for k, msgs := range e.Fields {
			fields[k] = append(fields[k], msgs...)
		}
	} else if err != nil {
		return UploadResult{}, err
	}
	m := checkMeta(fields, in.FormCode, in.Name, in.ContractType)
	var spec []render.Field
	if in.FieldSpec != nil && strings.TrimSpace(*in.FieldSpec) != "" {
		if err := json.Unmarshal([]byte(*in.FieldSpec), &spec); err != nil {
			fields.Add("FieldSpec", "Must be a JSON array of {name, label, type, required}.")
		} else {
			spec = checkSpec(fields, spec)
		}
	} else if err == nil {
		spec = make([]render.Field, 0, len(info.Placeholders))
		for _, p := range info.Placeholders {
			spec = append(spec, render.Field{Name: p, Label: p, Type: render.Text})
		}
	}
	if err := fields.Err(); err != nil {
		return UploadResult{}, err
	}
	if taken, err := s.store.formCodeTaken(ctx, m.formCode, ""); err != nil {
		return UploadResult{}, err
	} else if taken {
		return UploadResult{}, duplicateCode(m.formCode)
	}

	now := s.now()
	key := storage.NewKey(blobPrefix, now, string(info.Format))
	if _, err := s.blobs.Put(ctx, key, bytes.NewReader(in.Data), s.maxBytes); err != nil {
		return UploadResult{}, fmt.Errorf("store template file: %w", err)
	}
	t := &Template{
		ID: uuid.Must(uuid.NewV7()).String(), FormCode: m.formCode, Name: m.name, ContractType: m.contractType,
		FileName: fileName(in.FileName, info.Format), StoragePath: key, Format: string(info.Format),
		FieldSpec: specJSON(spec), IsActive: true, Version: 1,
		CreatedAt: now, CreatedBy: &actor.UserID, UpdatedAt: now, UpdatedBy: &actor.UserID,
	}
	err = s.db.InTx(ctx, func(ctx context.Context) error { return s.store.insert(ctx, t) })
	if err != nil {
		s.removeBlob(ctx, key)
		if db.IsUniqueViolation(err) {
			return UploadResult{}, duplicateCode(m.formCode)
		}
		return UploadResult{}, fmt.Errorf("insert template %s: %w", m.formCode, err)
	}
	return s.uploadResult(ctx, t.ID, info.Placeholders)
}

func (s *Service) uploadResult(ctx context.Context, id string, placeholders []string) (UploadResult, error) {
	d, err := s.Get(ctx, id)
	if err != nil {
		return UploadResult{}, err
	}
	missing, unused := compare(placeholders, d.FieldSpec)
	if placeholders == nil {
		placeholders = []string{}
	}
	return UploadResult{Template: d, Placeholders: placeholders, MissingFromSpec: missing, UnusedInSpec: unused}, nil
}

// removeBlob deletes a file this request stored or replaced; a failure
// leaves an orphan file, never an orphan row, and is logged.
func (s *Service) removeBlob(ctx context.Context, key string) {
	if err := s.blobs.Delete(context.WithoutCancel(ctx), key); err != nil {
		s.log.ErrorContext(ctx, "delete template file", "key", key, "err", err)
	}
}

// Update replaces a template's metadata. Switching on a template whose file
// is missing is refused.
func (s *Service) Update(ctx context.Context, actor authn.Principal, id string, in UpdateRequest) (TemplateDTO, error) {
	t, err := s.find(ctx, id)
	if err != nil {
		return TemplateDTO{}, err
	}
	fields := apperr.Fields{}
	m := checkMeta(fields, in.FormCode, in.Name, in.ContractType)
	if in.FieldSpec == nil {
		fields.Add("FieldSpec", "Is required.")
	}
	spec := checkSpec(fields, in.FieldSpec)
	if in.IsActive == nil {
		fields.Add("IsActive", "Is required.")
	}
	if err := fields.Err(); err != nil {
		return TemplateDTO{}, err
	}
	if in.Version != nil && *in.Version != t.Version {
		return TemplateDTO{}, staleVersion()
	}
	if *in.IsActive {
		ok, err := s.available(ctx, t)
		if err != nil {
			return TemplateDTO{}, err
		}
		if !ok {
			return TemplateDTO{}, fileMissing(t)
		}
	}
	if m.formCode != t.FormCode {
		if taken, err := s.store.formCodeTaken(ctx, m.formCode, t.ID); err != nil {
			return TemplateDTO{}, err
		} else if taken {
			return TemplateDTO{}, duplicateCode(m.formCode)
		}
	}
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		ok, err := s.store.update(ctx, id, in.Version, map[string]any{
			"form_code": m.formCode, "name": m.name, "contract_type": m.contractType, "field_spec": specJSON(spec),
			"is_active": *in.IsActive, "updated_at": s.now(), "updated_by": actor.UserID,
		})
		if err != nil {
			return err
		}
		if !ok {
			return staleVersion()
		}
		return nil
	})
	if db.IsUniqueViolation(err) {
		return TemplateDTO{}, duplicateCode(m.formCode)
	}
	if err != nil {
		return TemplateDTO{}, err
	}
	return s.Get(ctx, id)
}

// ReplaceFile stores a new file for a template: the new file is written
// first under a new key, then the row points at it, and only after the
// commit is the old file deleted. A failure at any step leaves the row on
// a file that exists.
func (s *Service) ReplaceFile(ctx context.Context, actor authn.Principal, id, clientName string, data []byte, version *int) (UploadResult, error) {
	t, err := s.find(ctx, id)
	if err != nil {
		return UploadResult{}, err
	}
	info, err := inspect(data, s.limits)
	if err != nil {
		return UploadResult{}, err
	}
	if version != nil && *version != t.Version {
		return UploadResult{}, staleVersion()
	}
	now := s.now()
	key := storage.NewKey(blobPrefix, now, string(info.Format))
	if _, err := s.blobs.Put(ctx, key, bytes.NewReader(data), s.maxBytes); err != nil {
		return UploadResult{}, fmt.Errorf("store template file: %w", err)
	}
	old := t.StoragePath
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		ok, err := s.store.update(ctx, id, version, map[string]any{
			"storage_path": key, "file_name": fileName(clientName, info.Format), "format": string(info.Format),
			"updated_at": now, "updated_by": actor.UserID,
		})
		if err != nil {
			return err
		}
		if !ok {
			return staleVersion()
		}
		if old != "" && old != key {
			db.AfterCommit(ctx, func() { s.removeBlob(ctx, old) })
		}
		return nil
	})
	if err != nil {
		s.removeBlob(ctx, key)
		return UploadResult{}, err
	}
	return s.uploadResult(ctx, id, info.Placeholders)
}
