// Package core implements the contracts module: contracts moving on their
// pinned workflow definition, with the audit trail, comments, attachments,
// generated codes, the inbox and the SLA job.
package core

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
	"github.com/contractflow/contractflow/platform/storage"
)

// Deps are the services the module uses, owned by other modules or the platform.
type Deps struct {
	DB         *db.DB
	Clock      clock.Clock
	Log        *slog.Logger
	Bus        *events.Bus
	Blobs      storage.Blobs
	Workflows  workflowdesigner.Engine
	MasterData masterdata.Lookup
	Directory  identity.Directory
	Renderer   Renderer  // nil when the forms module is off
	Templates  Templates // nil when the forms module is off
	Location   *time.Location
	// SearchParts is the trigram index by phase that serves search on
	// SQLite with FTS5 (nil elsewhere).
	SearchParts *search.Partitioned
}

// Service holds the module's behaviour.
type Service struct {
	Deps
	store *store
}

// New returns the service.
func New(d Deps) *Service {
	st := &store{db: d.DB, parts: d.SearchParts}
	if d.DB.Dialect() == db.Postgres {
		st.words = search.NewWordIndex("contracts", "phase")
	}
	return &Service{Deps: d, store: st}
}

// searchText is what list search matches of a contract besides its supplier.
func searchText(title string, code *string) string {
	if code == nil {
		return search.Text(title)
	}
	return search.Text(title, *code)
}

func (s *Service) now() time.Time { return s.Clock.Now() }

func notFound() *apperr.Error { return apperr.NotFound("Contract") }

// load finds a live contract by id (404 for unknown, malformed or deleted).
func (s *Service) load(ctx context.Context, id string) (*Contract, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, notFound()
	}
	c, err := s.store.get(ctx, id)
	if db.IsNotFound(err) {
		return nil, notFound()
	}
	return c, err
}

// visible loads a contract the caller may see: 404, then 403 unless the
// caller drafted it or holds an inbox role of its current phase.
func (s *Service) visible(ctx context.Context, p authn.Principal, id string) (*Contract, *workflowdesigner.Definition, error) {
	c, err := s.load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	def, err := s.Workflows.CanSee(ctx, p, documentOf(c))
	if err != nil {
		return nil, nil, err
	}
	return c, def, nil
}

// ListSpec is the whitelist of contract lists.
var ListSpec = paging.Spec{
	Sort: map[string]string{"createdAt": "contracts.created_at", "slaDeadline": "contracts.sla_deadline",
		"value": "contracts.value", "maHopDong": "contracts.ma_hop_dong", "title": "contracts.title"},
	DefaultSort: "-createdAt",
}

// InboxSpec pages the inbox; its order is always the deadline.
var InboxSpec = paging.Spec{Sort: map[string]string{"slaDeadline": "contracts.sla_deadline"}, DefaultSort: "slaDeadline"}

// List returns a page of the contracts the caller may see.
func (s *Service) List(ctx context.Context, p authn.Principal, f listFilter, req paging.Request) (paging.Page[Summary], error) {
	if f.Phase != "" && !slices.Contains(Phases, f.Phase) {
		return paging.Page[Summary]{}, apperr.FieldError("Phase", "Must be one of: "+strings.Join(Phases, ", ")+".")
	}
	if f.ContractType != "" && typeCodes[f.ContractType] == "" {
		return paging.Page[Summary]{}, apperr.FieldError("ContractType", "Must be one of: "+strings.Join(ContractTypes, ", ")+".")
	}
	for field, v := range map[string]string{"SupplierId": f.SupplierID, "ProjectId": f.ProjectID} {
		if _, err := uuid.Parse(v); v != "" && err != nil {
			return paging.Page[Summary]{}, apperr.FieldError(field, "Must be a UUID.")
		}
	}
	if f.Search != "" {
		ids, err := s.MasterData.SearchSupplierIDs(ctx, f.Search, 500)
		if err != nil {
			return paging.Page[Summary]{}, err
		}
		f.SupplierMatches = ids
	}
	read := func(ctx context.Context, sc workflowdesigner.Scope, req paging.Request) ([]Contract, int64, error) {
		return s.store.list(ctx, sc, f, req)
	}
	return workflowdesigner.ListPage(ctx, s.Workflows, KindName, p, req, read, s.summaries)
}

// Inbox returns the contracts waiting on the caller's roles, most urgent first.
func (s *Service) Inbox(ctx context.Context, p authn.Principal, req paging.Request) (paging.Page[InboxItem], error) {
	return workflowdesigner.ListPage(ctx, s.Workflows, KindName, p, req, s.store.inbox,
		workflowdesigner.Each(s.summaries, s.inboxItem))
}

// inboxItem is a summary with its urgency.
func (s *Service) inboxItem(sm Summary) InboxItem {
	return InboxItem{Summary: sm, Urgency: s.Workflows.Urgency(sm.SLADeadline)}
}

// summaries shapes rows, resolving suppliers, projects and drafters in one
// batch each rather than per row.
func (s *Service) summaries(ctx context.Context, rows []Contract) ([]Summary, error) {
	supplierIDs, projectIDs, userIDs := make([]string, 0, len(rows)), make([]string, 0, len(rows)), make([]string, 0, len(rows))
	for _, c := range rows {
		supplierIDs = append(supplierIDs, c.SupplierID)
		if c.ProjectID != nil {
			projectIDs = append(projectIDs, *c.ProjectID)
		}
		userIDs = append(userIDs, c.DrafterID)
	}
	suppliers, err := s.MasterData.Suppliers(ctx, dedupe(supplierIDs))
	if err != nil {
		return nil, err
	}
	projects, err := s.MasterData.Projects(ctx, dedupe(projectIDs))
	if err != nil {
		return nil, err
	}
	names, err := s.Directory.Names(ctx, dedupe(userIDs))
	if err != nil {
		return nil, err
	}
	out := make([]Summary, len(rows))
	for i, c := range rows {
		out[i] = summary(&c, suppliers, projects, names)
	}
	return out, nil
}

func summary(c *Contract, suppliers, projects map[string]masterdata.Ref, names map[string]string) Summary {
	sm := Summary{ID: c.ID, Title: c.Title, ContractType: c.ContractType, Phase: c.Phase, MaHopDong: c.MaHopDong,
		Value: c.Value, Currency: c.Currency, BypassProcurementAndCCM: c.BypassProcurementAndCCM,
		SLADeadline: clock.UTC(c.SLADeadline), DrafterID: c.DrafterID, DrafterName: names[c.DrafterID],
		CreatedAt: c.CreatedAt.UTC(), Version: c.Version}
	if r, ok := suppliers[c.SupplierID]; ok {
		sm.Supplier = &Ref{ID: r.ID, Code: r.Code, Name: r.Name}
	}
	if c.ProjectID != nil {
		if r, ok := projects[*c.ProjectID]; ok {
			sm.Project = &Ref{ID: r.ID, Code: r.Code, Name: r.Name}
		}
	}
	return sm
}

func dedupe(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Get returns the detail of a contract the caller may see.
func (s *Service) Get(ctx context.Context, p authn.Principal, id string) (Detail, error) {
	c, th, def, err := s.visibleWithThread(ctx, p, id)
	if err != nil {
		return Detail{}, err
	}
	return s.present(ctx, p, c, def, th)
}

// visibleWithThread is visible with the contract's thread, read in the
// same round trip on Postgres (before the visibility rule, which needs the
// row; it is not shown unless the rule lets the caller see it).
func (s *Service) visibleWithThread(ctx context.Context, p authn.Principal, id string) (*Contract, thread, *workflowdesigner.Definition, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, thread{}, nil, notFound()
	}
	c, th, err := s.store.withThread(ctx, id)
	if err != nil {
		return nil, thread{}, nil, err
	}
	if c == nil {
		return nil, thread{}, nil, notFound()
	}
	def, err := s.Workflows.CanSee(ctx, p, documentOf(c))
	if err != nil {
		return nil, thread{}, nil, err
	}
	return c, th, def, nil
}

// present is the detail of c with its thread, resolving the names of
// everyone the thread mentions, its supplier and its project in one lookup
// each.
func (s *Service) present(ctx context.Context, p authn.Principal, c *Contract, def *workflowdesigner.Definition, th thread) (Detail, error) {
	users := make([]string, 0, 1+len(th.approvals)+len(th.comments)+len(th.attachments))
	users = append(users, c.DrafterID)
	for _, a := range th.approvals {
		if a.ApproverUserID != nil {
			users = append(users, *a.ApproverUserID)
		}
	}
	for _, cm := range th.comments {
		users = append(users, cm.AuthorID)
	}
	for _, at := range th.attachments {
		users = append(users, at.UploadedBy)
	}
	names, err := s.Directory.Names(ctx, dedupe(users))
	if err != nil {
		return Detail{}, err
	}
	suppliers, err := s.MasterData.Suppliers(ctx, []string{c.SupplierID})
	if err != nil {
		return Detail{}, err
	}
	var projects map[string]masterdata.Ref
	if c.ProjectID != nil {
		if projects, err = s.MasterData.Projects(ctx, []string{*c.ProjectID}); err != nil {
			return Detail{}, err
		}
	}
	d := s.shape(p, c, def, summary(c, suppliers, projects, names))
	d.Approvals = th.approvals
	for i, a := range d.Approvals {
		if a.ApproverUserID != nil {
			n := names[*a.ApproverUserID]
			d.Approvals[i].ApproverName = &n
		}
	}
	for _, cm := range th.comments {
		d.Comments = append(d.Comments, CommentDTO{ID: cm.ID, Phase: cm.Phase, Content: cm.Content, AuthorID: cm.AuthorID,
			AuthorName: names[cm.AuthorID], CreatedAt: cm.CreatedAt.UTC()})
	}
	for _, at := range th.attachments {
		d.Attachments = append(d.Attachments, attachmentDTO(at, names))
	}
	return d, nil
}

// shape is the detail of c without approvals, comments and attachments.
func (s *Service) shape(p authn.Principal, c *Contract, def *workflowdesigner.Definition, sm Summary) Detail {
	return Detail{Summary: sm,
		TemplateID: c.TemplateID, SupplierID: c.SupplierID, ProjectID: c.ProjectID, DepartmentID: c.DepartmentID,
		SLAWarningSent: c.SLAWarningSent, DraftData: json.RawMessage(c.DraftData), WorkflowDefinitionID: c.WorkflowDefinitionID,
		PurchaseEvaluationID: c.PurchaseEvaluationID, BudgetLineID: c.BudgetLineID, Description: c.Description,
		StartDate: c.StartDate, EndDate: c.EndDate, CreatedBy: c.CreatedBy, UpdatedAt: c.UpdatedAt.UTC(), UpdatedBy: c.UpdatedBy,
		Approvals: []workflowdesigner.HistoryEntry{}, Comments: []CommentDTO{}, Attachments: []AttachmentDTO{},
		AllowedTransitions: s.Workflows.AllowedMoves(def, p, documentOf(c))}
}

func attachmentDTO(a Attachment, names map[string]string) AttachmentDTO {
	unfilled := []string{}
	if a.UnfilledPlaceholders != "" {
		// Written only by storeAttachment, from a []string: a row that does
		// not decode shows none rather than failing the contract's detail.
		if err := json.Unmarshal([]byte(a.UnfilledPlaceholders), &unfilled); err != nil || unfilled == nil {
			unfilled = []string{}
		}
	}
	return AttachmentDTO{ID: a.ID, FileName: a.FileName, Purpose: a.Purpose, Size: a.Size, ContentType: a.ContentType,
		UploadedBy: a.UploadedBy, UploadedByName: names[a.UploadedBy], CreatedAt: a.CreatedAt.UTC(),
		UnfilledPlaceholders: unfilled}
}

// refs are the master-data records a create or update names, as checked.
type refs struct {
	suppliers, projects map[string]masterdata.Ref
}

// checkRefs validates the master-data references of a create or update and
// returns the records it read.
func (s *Service) checkRefs(ctx context.Context, in *CreateRequest) (refs, error) {
	found := refs{suppliers: map[string]masterdata.Ref{}, projects: map[string]masterdata.Ref{}}
	fields := apperr.Fields{}
	if err := masterdata.CheckRef(ctx, fields, "SupplierId", s.MasterData.Supplier, in.SupplierID, found.suppliers); err != nil {
		return found, err
	}
	switch {
	case in.ProjectID != nil:
		if err := masterdata.CheckRef(ctx, fields, "ProjectId", s.MasterData.Project, *in.ProjectID, found.projects); err != nil {
			return found, err
		}
	case !isFramework(in.ContractType):
		fields.Add("ProjectId", "Is required for this contract type.")
	}
	if in.DepartmentID != nil {
		if err := masterdata.CheckRef(ctx, fields, "DepartmentId", s.MasterData.Department, *in.DepartmentID, nil); err != nil {
			return found, err
		}
	}
	// With the forms module off there is nothing to check a template against;
	// the id is kept for when it is back.
	if in.TemplateID != nil && s.Templates != nil {
		t, err := s.Templates.TemplateInfo(ctx, *in.TemplateID)
		switch {
		case apperr.KindOf(err) == apperr.KindNotFound:
			fields.Add("TemplateId", "No such template.")
		case err != nil:
			return found, err
		case t.ContractType != in.ContractType:
			fields.Add("TemplateId", "The template is for "+t.ContractType+" contracts, not "+in.ContractType+".")
		case !t.IsActive:
			fields.Add("TemplateId", "The template is switched off.")
		}
	}
	if in.StartDate != nil && in.EndDate != nil && *in.EndDate < *in.StartDate {
		fields.Add("EndDate", "Must not be before StartDate.")
	}
	return found, fields.Err()
}

// draftJSON checks that draft data is a JSON object and returns its text.
func draftJSON(raw json.RawMessage) (string, error) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	if raw[0] != '{' {
		return "", apperr.FieldError("DraftData", "Must be a JSON object.")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", apperr.FieldError("DraftData", "Must be a JSON object.")
	}
	return buf.String(), nil
}

// Create drafts a contract: it starts in the definition's initial phase,
// pinned to the definition assigned to its type, with that phase's SLA.
func (s *Service) Create(ctx context.Context, p authn.Principal, in CreateRequest) (Detail, error) {
	in.Title = strings.TrimSpace(in.Title) // a blank title is a missing one
	if err := httpx.Validate(in); err != nil {
		return Detail{}, err
	}
	draft, err := draftJSON(in.DraftData)
	if err != nil {
		return Detail{}, err
	}
	start, err := s.Workflows.Start(ctx, documentType(in.ContractType))
	if err != nil {
		return Detail{}, err
	}
	def, now := start.Definition, s.now()
	currency := in.Currency
	if currency == "" {
		currency = "VND"
	}
	c := &Contract{ID: uuid.Must(uuid.NewV7()).String(), Title: in.Title, SearchText: searchText(in.Title, nil), ContractType: in.ContractType,
		TemplateID: in.TemplateID, SupplierID: in.SupplierID, ProjectID: in.ProjectID, DepartmentID: in.DepartmentID,
		Value: in.Value, Currency: currency, BypassProcurementAndCCM: in.BypassProcurementAndCCM,
		Phase: start.Phase, SLADeadline: start.Deadline, DraftData: draft, DrafterID: p.UserID,
		WorkflowDefinitionID: def.ID, PurchaseEvaluationID: in.PurchaseEvaluationID, BudgetLineID: in.BudgetLineID,
		Description: in.Description, StartDate: in.StartDate, EndDate: in.EndDate, Version: 1,
		CreatedAt: now, CreatedBy: &p.UserID, UpdatedAt: now, UpdatedBy: &p.UserID}
	var found refs
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		// Checked inside the transaction: the master-data rows stay locked
		// until it commits, so a concurrent delete waits and then sees this
		// contract (and refuses), instead of both succeeding.
		var err error
		if found, err = s.checkRefs(ctx, &in); err != nil {
			return err
		}
		if err := s.store.create(ctx, c); err != nil {
			return err
		}
		return s.Bus.Publish(ctx, Created{ContractID: c.ID, DrafterID: c.DrafterID, ProjectID: c.ProjectID, Value: c.Value,
			BudgetLineID: c.BudgetLineID})
	})
	if err != nil {
		return Detail{}, err
	}
	// Answered from what was written and checked: a new contract has no
	// approvals, comments or attachments yet, its supplier and project were
	// just read, and its drafter is the caller.
	return s.shape(p, c, def, summary(c, found.suppliers, found.projects, map[string]string{p.UserID: p.Name})), nil
}

// CreateFromEvaluation drafts a contract for another module through
// Create, in the transaction riding in ctx, and returns its id.
func (s *Service) CreateFromEvaluation(ctx context.Context, p authn.Principal, in CreateRequest) (string, error) {
	var id string
	err := s.DB.InTx(ctx, func(ctx context.Context) error {
		d, err := s.Create(ctx, p, in)
		id = d.ID
		return err
	})
	return id, err
}

// Update changes a draft: only in the initial phase, by its drafter or Admin.
func (s *Service) Update(ctx context.Context, p authn.Principal, id string, in UpdateRequest) (Detail, error) {
	c, def, err := s.visible(ctx, p, id)
	if err != nil {
		return Detail{}, err
	}
	if !p.IsAdmin() && c.DrafterID != p.UserID {
		return Detail{}, apperr.Forbidden("Only the drafter or an administrator may edit a draft.")
	}
	in.Title = strings.TrimSpace(in.Title)
	// Validated as CreateRequest so that errors are keyed "Title", not
	// "CreateRequest.Title".
	if err := httpx.Validate(in.CreateRequest); err != nil {
		return Detail{}, err
	}
	draft, err := draftJSON(in.DraftData)
	if err != nil {
		return Detail{}, err
	}
	if c.Phase != def.InitialPhase {
		return Detail{}, apperr.Conflict("not_editable", "Only a contract in "+def.InitialPhase+" can be edited.")
	}
	if in.Version != nil && *in.Version != c.Version {
		return Detail{}, staleVersion()
	}
	if in.ContractType != c.ContractType {
		return Detail{}, apperr.FieldError("ContractType", "Cannot change; create a new contract instead.")
	}
	currency := in.Currency
	if currency == "" {
		currency = c.Currency
	}
	cols := map[string]any{"title": in.Title, "search_text": searchText(in.Title, c.MaHopDong), "template_id": in.TemplateID, "supplier_id": in.SupplierID,
		"project_id": in.ProjectID, "department_id": in.DepartmentID, "value": in.Value, "currency": currency,
		"bypass_procurement_and_ccm": in.BypassProcurementAndCCM, "draft_data": draft,
		"purchase_evaluation_id": in.PurchaseEvaluationID, "budget_line_id": in.BudgetLineID, "description": in.Description,
		"start_date": in.StartDate, "end_date": in.EndDate, "updated_at": s.now(), "updated_by": p.UserID}
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		// Inside the transaction for the same reason as in Create.
		if _, err := s.checkRefs(ctx, &in.CreateRequest); err != nil {
			return err
		}
		ok, err := s.store.update(ctx, c.ID, c.Version, cols)
		if err != nil {
			return err
		}
		if !ok {
			return staleVersion()
		}
		return s.Bus.Publish(ctx, Updated{ContractID: c.ID, ProjectID: in.ProjectID, Value: in.Value, BudgetLineID: in.BudgetLineID})
	})
	if err != nil {
		return Detail{}, err
	}
	return s.Get(ctx, p, id)
}

func staleVersion() *apperr.Error {
	return apperr.Conflict("stale_version", "The contract was changed by someone else; reload it and try again.")
}

// Delete soft-deletes a contract that has not reached DangKiemTraCCM.
func (s *Service) Delete(ctx context.Context, p authn.Principal, id string) error {
	c, _, err := s.visible(ctx, p, id)
	if err != nil {
		return err
	}
	if !p.IsAdmin() && c.DrafterID != p.UserID {
		return apperr.Forbidden("Only the drafter or an administrator may delete a contract.")
	}
	if slices.Contains(undeletable, c.Phase) {
		return apperr.Conflict("not_deletable", "A contract in "+c.Phase+" can no longer be deleted.")
	}
	now := s.now()
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		ok, err := s.store.update(ctx, c.ID, c.Version, map[string]any{"deleted_at": now, "deleted_by": p.UserID,
			"updated_at": now, "updated_by": p.UserID})
		if err != nil {
			return err
		}
		if !ok {
			return staleVersion()
		}
		return s.Bus.Publish(ctx, Deleted{ContractID: c.ID, BudgetLineID: c.BudgetLineID, Value: c.Value})
	})
}

// AddComment posts to the thread, recording the current phase.
func (s *Service) AddComment(ctx context.Context, p authn.Principal, id string, in CommentRequest) (CommentDTO, error) {
	c, def, err := s.visible(ctx, p, id)
	if err != nil {
		return CommentDTO{}, err
	}
	in.Content = strings.TrimSpace(in.Content)
	if err := httpx.Validate(in); err != nil {
		return CommentDTO{}, err
	}
	cm := Comment{ID: uuid.Must(uuid.NewV7()).String(), ContractID: c.ID, Phase: c.Phase, Content: in.Content,
		AuthorID: p.UserID, CreatedAt: s.now()}
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.insert(ctx, &cm); err != nil {
			return err
		}
		return s.Bus.Publish(ctx, Commented{ContractID: c.ID, CommentID: cm.ID, AuthorID: p.UserID, DrafterID: c.DrafterID, Phase: c.Phase,
			Title: c.Title, InboxRoles: def.InboxRoles(c.Phase)})
	})
	if err != nil {
		return CommentDTO{}, err
	}
	return CommentDTO{ID: cm.ID, Phase: cm.Phase, Content: cm.Content, AuthorID: cm.AuthorID, AuthorName: p.Name, CreatedAt: cm.CreatedAt.UTC()}, nil
}

// VetoMasterDataDelete refuses deleting a supplier, project or department a
// live contract references (masterdata publishes the deletion in its
// transaction).
func (s *Service) VetoMasterDataDelete(ctx context.Context, e events.Event) error {
	return masterdata.Veto("contract", s.store.referencing)(ctx, e)
}
