// Package core implements the procurement module: purchase evaluations
// with their quotations compared side by side, the winner, payment terms
// and department opinions, moving on the workflow runtime under policy A
// or B, and the contract drafted from an approved one.
package core

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-json"
	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
	"github.com/contractflow/contractflow/platform/sequence"
)

// Deps are the services the module uses, owned by other modules or the platform.
type Deps struct {
	DB         *db.DB
	Clock      clock.Clock
	Log        *slog.Logger
	Bus        *events.Bus
	Workflows  workflowdesigner.Engine
	MasterData masterdata.Lookup
	Directory  identity.Directory
	Contracts  contracts.Drafts
	Config     *Config
	Location   *time.Location // business.timeZone: the voucher code's year
	// SearchIndexed says a trigram index serves search (SQLite with FTS5).
	SearchIndexed bool
}

// Service holds the module's behaviour.
type Service struct {
	Deps
	store *store
}

// New returns the service.
func New(d Deps) *Service {
	return &Service{Deps: d, store: &store{db: d.DB, indexed: d.SearchIndexed}}
}

// now is the transaction time, to the microsecond both engines store.
func (s *Service) now() time.Time { return s.Clock.Now().UTC().Truncate(time.Microsecond) }

func newID() string { return uuid.Must(uuid.NewV7()).String() }

func notFound() *apperr.Error { return apperr.NotFound("Purchase evaluation") }

func notEditable(phase string) *apperr.Error {
	return apperr.Conflict("not_editable", "Only an evaluation in "+phase+" can be changed; it has moved on.")
}

func staleVersion() *apperr.Error {
	return apperr.Conflict("stale_version", "The evaluation was changed by someone else; reload it and try again.")
}

// load finds a live evaluation by id (404 for unknown, malformed or deleted).
func (s *Service) load(ctx context.Context, id string) (*Evaluation, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, notFound()
	}
	e, err := s.store.get(ctx, id)
	if db.IsNotFound(err) {
		return nil, notFound()
	}
	return e, err
}

// documentOf is what the workflow runtime sees of an evaluation.
func documentOf(e *Evaluation) workflowdesigner.Document {
	return workflowdesigner.Document{ID: e.ID, Phase: e.Phase, DefinitionID: e.WorkflowDefinitionID, OwnerID: e.CreatedBy,
		Deadline: e.SLADeadline, Version: e.Version, HistoryHash: e.HistoryHash, Data: e}
}

// visible loads an evaluation the caller may see: 404, then 403 unless the
// caller created it or holds an inbox role of its current phase.
func (s *Service) visible(ctx context.Context, p authn.Principal, id string) (*Evaluation, *workflowdesigner.Definition, error) {
	e, err := s.load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	def, err := s.Workflows.CanSee(ctx, p, documentOf(e))
	if err != nil {
		return nil, nil, err
	}
	return e, def, nil
}

// editable loads a draft the caller may change: visible, and theirs unless
// they are Admin.
func (s *Service) editable(ctx context.Context, p authn.Principal, id string) (*Evaluation, *workflowdesigner.Definition, error) {
	e, def, err := s.visible(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	if !p.IsAdmin() && e.CreatedBy != p.UserID {
		return nil, nil, apperr.Forbidden("Only the evaluation's creator or an administrator may change it.")
	}
	return e, def, nil
}

// ListSpec is the whitelist of evaluation lists.
var ListSpec = paging.Spec{
	Sort: map[string]string{"createdAt": "purchase_evaluations.created_at", "slaDeadline": "purchase_evaluations.sla_deadline",
		"estimatedValue": "purchase_evaluations.estimated_value", "maPhieu": "purchase_evaluations.ma_phieu",
		"title": "purchase_evaluations.title"},
	DefaultSort: "-createdAt",
}

// InboxSpec pages the inbox; its order is always the deadline.
var InboxSpec = paging.Spec{Sort: map[string]string{"slaDeadline": "purchase_evaluations.sla_deadline"}, DefaultSort: "slaDeadline"}

// List returns a page of the evaluations the caller may see.
func (s *Service) List(ctx context.Context, p authn.Principal, f listFilter, req paging.Request) (paging.Page[Summary], error) {
	fields := apperr.Fields{}
	if f.Phase != "" && !slices.Contains(Phases, f.Phase) {
		fields.Add("Phase", "Must be one of: "+strings.Join(Phases, ", ")+".")
	}
	if f.Policy != "" && !slices.Contains(Policies, f.Policy) {
		fields.Add("Policy", "Must be A or B.")
	}
	if _, err := uuid.Parse(f.ProjectID); f.ProjectID != "" && err != nil {
		fields.Add("ProjectId", "Must be a UUID.")
	}
	if err := fields.Err(); err != nil {
		return paging.Page[Summary]{}, err
	}
	read := func(ctx context.Context, sc workflowdesigner.Scope, req paging.Request) ([]Evaluation, int64, error) {
		return s.store.list(ctx, sc, f, req)
	}
	return workflowdesigner.ListPage(ctx, s.Workflows, KindName, p, req, read, s.summaries)
}

// Inbox returns the evaluations waiting on the caller's roles, most urgent first.
func (s *Service) Inbox(ctx context.Context, p authn.Principal, req paging.Request) (paging.Page[InboxItem], error) {
	return workflowdesigner.ListPage(ctx, s.Workflows, KindName, p, req, s.store.inbox,
		workflowdesigner.Each(s.summaries, s.inboxItem))
}

// inboxItem is a summary with its urgency.
func (s *Service) inboxItem(sm Summary) InboxItem {
	return InboxItem{Summary: sm, Urgency: s.Workflows.Urgency(sm.SLADeadline)}
}

// summaries shapes rows, resolving projects and creators in one batch each.
func (s *Service) summaries(ctx context.Context, rows []Evaluation) ([]Summary, error) {
	var projectIDs, userIDs []string
	for _, e := range rows {
		projectIDs = append(projectIDs, e.ProjectID)
		userIDs = append(userIDs, e.CreatedBy)
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
	for i := range rows {
		out[i] = summary(&rows[i], projects, names)
	}
	return out, nil
}

func summary(e *Evaluation, projects map[string]masterdata.Ref, names map[string]string) Summary {
	sm := Summary{ID: e.ID, MaPhieu: e.MaPhieu, Policy: e.Policy, Title: e.Title, Category: e.Category,
		EstimatedValue: e.EstimatedValue, Currency: e.Currency, Phase: e.Phase, SLADeadline: clock.UTC(e.SLADeadline),
		SelectedQuotationID: e.SelectedQuotationID, ContractID: e.ContractID, CreatedBy: e.CreatedBy,
		CreatedByName: names[e.CreatedBy], CreatedAt: e.CreatedAt.UTC(), Version: e.Version}
	if r, ok := projects[e.ProjectID]; ok {
		sm.Project = &Ref{ID: r.ID, Code: r.Code, Name: r.Name}
	}
	return sm
}

func dedupe(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Get returns the detail of an evaluation the caller may see.
func (s *Service) Get(ctx context.Context, p authn.Principal, id string) (Detail, error) {
	return s.reload(ctx, p, id, nil)
}

// reload answers the detail of an evaluation for p: the evaluation and its
// thread in one round trip on Postgres, then the visibility rule, unless
// def says the caller just changed it.
func (s *Service) reload(ctx context.Context, p authn.Principal, id string, def *workflowdesigner.Definition) (Detail, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Detail{}, notFound()
	}
	e, t, err := s.store.withThread(ctx, id, "", false)
	if err != nil {
		return Detail{}, err
	}
	if e == nil {
		return Detail{}, notFound()
	}
	if def == nil {
		if def, err = s.Workflows.CanSee(ctx, p, documentOf(e)); err != nil {
			return Detail{}, err
		}
	}
	return s.present(ctx, p, e, def, t)
}

// present is the detail of e with its thread, resolving names, suppliers,
// project and department in one batch each.
func (s *Service) present(ctx context.Context, p authn.Principal, e *Evaluation, def *workflowdesigner.Definition, t thread) (Detail, error) {
	quotes, history, opinions := t.quotations, t.history, t.opinions
	users := []string{e.CreatedBy}
	for _, h := range history {
		if h.ApproverUserID != nil {
			users = append(users, *h.ApproverUserID)
		}
	}
	for _, o := range opinions {
		users = append(users, o.UserID)
	}
	names, err := s.Directory.Names(ctx, dedupe(users))
	if err != nil {
		return Detail{}, err
	}
	supplierIDs := make([]string, len(quotes))
	for i, q := range quotes {
		supplierIDs[i] = q.SupplierID
	}
	suppliers, err := s.MasterData.Suppliers(ctx, dedupe(supplierIDs))
	if err != nil {
		return Detail{}, err
	}
	projects, err := s.MasterData.Projects(ctx, []string{e.ProjectID})
	if err != nil {
		return Detail{}, err
	}
	var deps map[string]masterdata.Ref
	if e.DepartmentID != nil {
		if deps, err = s.MasterData.Departments(ctx, []string{*e.DepartmentID}); err != nil {
			return Detail{}, err
		}
	}
	d := s.shape(p, e, def, projects, deps, names)
	d.Quotations, d.History = compare(quotes, suppliers, e.SelectedQuotationID), history
	for _, o := range opinions {
		d.Opinions = append(d.Opinions, OpinionDTO{ID: o.ID, Kind: o.Kind, Verdict: o.Verdict, Comment: o.Comment,
			UserID: o.UserID, UserName: names[o.UserID], CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC()})
	}
	for i, h := range d.History {
		if h.ApproverUserID != nil {
			n := names[*h.ApproverUserID]
			d.History[i].ApproverName = &n
		}
	}
	return d, nil
}

// shape is the detail of e without quotations, history and opinions.
func (s *Service) shape(p authn.Principal, e *Evaluation, def *workflowdesigner.Definition,
	projects, deps map[string]masterdata.Ref, names map[string]string) Detail {
	d := Detail{Summary: summary(e, projects, names), ProjectID: e.ProjectID, DepartmentID: e.DepartmentID,
		Description: e.Description, SLAWarningSent: e.SLAWarningSent, Quotations: compare(nil, nil, nil),
		SelectionReason: e.SelectionReason, PaymentTerms: terms(e.PaymentTerms), RequiredOpinions: []string{},
		Opinions: []OpinionDTO{}, History: []workflowdesigner.HistoryEntry{}, ApprovedAt: clock.UTC(e.ApprovedAt),
		WorkflowDefinitionID: e.WorkflowDefinitionID, UpdatedAt: e.UpdatedAt.UTC(), UpdatedBy: e.UpdatedBy,
		AllowedTransitions: s.Workflows.AllowedMoves(def, p, documentOf(e))}
	if e.DepartmentID != nil {
		if r, ok := deps[*e.DepartmentID]; ok {
			d.Department = &Ref{ID: r.ID, Code: r.Code, Name: r.Name}
		}
	}
	if needsOpinions(def) {
		d.RequiredOpinions = append(d.RequiredOpinions, s.Config.RequiredOpinions...)
	}
	return d
}

// needsOpinions reports whether the pinned definition has a move that
// waits for the opinion quorum.
func needsOpinions(def *workflowdesigner.Definition) bool {
	return slices.ContainsFunc(def.Transitions, func(t workflowdesigner.Transition) bool { return t.Precondition == PreconditionOpinions })
}

// compare puts quotations side by side, cheapest first (the store's order).
func compare(quotes []Quotation, suppliers map[string]masterdata.Ref, selected *string) []QuotationDTO {
	out := make([]QuotationDTO, len(quotes))
	for i, q := range quotes {
		cheapest := quotes[0].Amount
		dto := QuotationDTO{ID: q.ID, SupplierID: q.SupplierID, Amount: q.Amount, DeliveryDays: q.DeliveryDays,
			WarrantyMonths: q.WarrantyMonths, Notes: q.Notes, Rank: i + 1, DiffToCheapest: q.Amount - cheapest,
			Selected: selected != nil && *selected == q.ID}
		if i > 0 && q.Amount == quotes[i-1].Amount {
			dto.Rank = out[i-1].Rank
		}
		if cheapest > 0 {
			dto.DiffToCheapestPercent = math.Round(float64(dto.DiffToCheapest)/float64(cheapest)*1000) / 10
		}
		if r, ok := suppliers[q.SupplierID]; ok {
			dto.Supplier = &Ref{ID: r.ID, Code: r.Code, Name: r.Name}
		}
		out[i] = dto
	}
	return out
}

// terms decodes the stored payment terms, with go-json: encoding/json's
// reflective decoding of this small array was a tenth of the server's CPU
// on a Postgres submit, which decodes it twice (its precondition and its
// answer).
func terms(stored string) []PaymentTerm {
	out := []PaymentTerm{}
	_ = json.Unmarshal([]byte(stored), &out)
	return out
}

// checkTerms reports payment terms whose percentages are out of range or
// do not add up to 100 (no terms at all is allowed while drafting).
func checkTerms(ts []PaymentTerm, fields apperr.Fields) {
	var sum money.Amount
	for i, t := range ts {
		if t.Percent <= 0 || t.Percent > money.FromUnits(100) {
			fields.Add(fmt.Sprintf("PaymentTerms[%d].Percent", i), "Must be more than 0 and at most 100.")
		}
		sum += t.Percent
	}
	if len(ts) > 0 && sum != money.FromUnits(100) {
		fields.Add("PaymentTerms", fmt.Sprintf("The percentages add up to %s; they must add up to 100.", sum))
	}
}

// checkInput validates a create or update body and the records it names.
// refs are the master-data records a create or update names, as checked.
type refs struct {
	projects, departments map[string]masterdata.Ref
}

func (s *Service) checkInput(ctx context.Context, in *CreateRequest) (refs, error) {
	found := refs{projects: map[string]masterdata.Ref{}, departments: map[string]masterdata.Ref{}}
	fields := apperr.Fields{}
	if err := masterdata.CheckRef(ctx, fields, "ProjectId", s.MasterData.Project, in.ProjectID, found.projects); err != nil {
		return found, err
	}
	if in.DepartmentID != nil {
		if err := masterdata.CheckRef(ctx, fields, "DepartmentId", s.MasterData.Department, *in.DepartmentID, found.departments); err != nil {
			return found, err
		}
	}
	return found, fields.Err()
}

// validate normalises and checks a body's own rules.
func validate(in *CreateRequest) error {
	in.Title = strings.TrimSpace(in.Title) // a blank title is a missing one
	fields := apperr.Fields{}
	if err := httpx.Validate(in); err != nil {
		e, ok := apperr.As(err)
		if !ok {
			return err
		}
		for k, v := range e.Fields {
			fields[k] = append(fields[k], v...)
		}
	}
	checkTerms(in.PaymentTerms, fields)
	return fields.Err()
}

func termsJSON(ts []PaymentTerm) string {
	if ts == nil {
		ts = []PaymentTerm{}
	}
	b, _ := json.Marshal(ts)
	return string(b)
}

// Create opens an evaluation: its policy (B from procurement.policyBThreshold
// unless the creator chooses), its voucher code from the per-prefix
// sequence and its pinned definition, all in one transaction.
func (s *Service) Create(ctx context.Context, p authn.Principal, in CreateRequest) (Detail, error) {
	if err := validate(&in); err != nil {
		return Detail{}, err
	}
	policy := in.Policy
	if policy == "" {
		policy = PolicyA
		if in.EstimatedValue >= s.Config.Threshold() {
			policy = PolicyB
		}
	}
	start, err := s.Workflows.Start(ctx, documentType(policy))
	if err != nil {
		return Detail{}, err
	}
	currency := in.Currency
	if currency == "" {
		currency = "VND"
	}
	now := s.now()
	e := &Evaluation{ID: uuid.Must(uuid.NewV7()).String(), Policy: policy, Title: in.Title, ProjectID: in.ProjectID,
		DepartmentID: in.DepartmentID, Category: in.Category, Description: in.Description, EstimatedValue: in.EstimatedValue,
		Currency: currency, PaymentTerms: termsJSON(in.PaymentTerms), Phase: start.Phase, SLADeadline: start.Deadline,
		WorkflowDefinitionID: start.Definition.ID, Version: 1, CreatedAt: now, CreatedBy: p.UserID, UpdatedAt: now, UpdatedBy: &p.UserID}
	var found refs
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		// Inside the transaction: the master-data rows stay share-locked
		// until it commits, so a concurrent delete sees this evaluation.
		var err error
		if found, err = s.checkInput(ctx, &in); err != nil {
			return err
		}
		prefix := fmt.Sprintf("PE/%d/%s", now.In(s.Location).Year(), policy)
		seq, err := sequence.Next(ctx, s.DB, "purchase_evaluation_code_sequences", prefix)
		if err != nil {
			return err
		}
		e.MaPhieu = fmt.Sprintf("%s/%03d", prefix, seq)
		e.SearchText = search.Text(e.Title, e.MaPhieu)
		return s.store.create(ctx, e)
	})
	if err != nil {
		return Detail{}, err
	}
	// Answered from what was written and checked: a new evaluation has no
	// quotations, history or opinions yet, its project and department were
	// just read, and its creator is the caller.
	return s.shape(p, e, start.Definition, found.projects, found.departments, map[string]string{p.UserID: p.Name}), nil
}

// Update changes a draft: only in the initial phase, by its creator or Admin.
func (s *Service) Update(ctx context.Context, p authn.Principal, id string, in UpdateRequest) (Detail, error) {
	e, def, err := s.editable(ctx, p, id)
	if err != nil {
		return Detail{}, err
	}
	// Validated as CreateRequest so that errors are keyed "Title", not
	// "CreateRequest.Title".
	if err := validate(&in.CreateRequest); err != nil {
		return Detail{}, err
	}
	if in.Policy != "" && in.Policy != e.Policy {
		return Detail{}, apperr.FieldError("Policy", "Cannot change; it names the voucher code and the workflow. Create a new evaluation instead.")
	}
	if e.Phase != def.InitialPhase {
		return Detail{}, notEditable(def.InitialPhase)
	}
	if in.Version != nil && *in.Version != e.Version {
		return Detail{}, staleVersion()
	}
	currency := in.Currency
	if currency == "" {
		currency = e.Currency
	}
	cols := map[string]any{"title": in.Title, "search_text": search.Text(in.Title, e.MaPhieu), "project_id": in.ProjectID,
		"department_id": in.DepartmentID, "category": in.Category, "description": in.Description,
		"estimated_value": in.EstimatedValue, "currency": currency, "payment_terms": termsJSON(in.PaymentTerms),
		"updated_at": s.now(), "updated_by": p.UserID}
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.checkInput(ctx, &in.CreateRequest); err != nil {
			return err
		}
		return s.write(ctx, e, def, in.Version, cols)
	})
	if err != nil {
		return Detail{}, err
	}
	return s.reload(ctx, p, id, def)
}

// write applies cols to a draft by compare-and-set; when it fails it says
// why: deleted (404), moved on (409 not_editable) or changed (409 stale_version).
func (s *Service) write(ctx context.Context, e *Evaluation, def *workflowdesigner.Definition, version *int, cols map[string]any) error {
	ok, err := s.store.update(ctx, e.ID, def.InitialPhase, version, cols)
	if err != nil || ok {
		return err
	}
	now, err := s.load(ctx, e.ID)
	switch {
	case err != nil:
		return err
	case now.Phase != def.InitialPhase:
		return notEditable(def.InitialPhase)
	}
	return staleVersion()
}

// Delete soft-deletes a draft, by its creator or Admin.
func (s *Service) Delete(ctx context.Context, p authn.Principal, id string) error {
	e, def, err := s.editable(ctx, p, id)
	if err != nil {
		return err
	}
	if e.Phase != def.InitialPhase {
		return apperr.Conflict("not_deletable", "Only an evaluation in "+def.InitialPhase+" can be deleted.")
	}
	now := s.now()
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		ok, err := s.store.update(ctx, e.ID, def.InitialPhase, nil, map[string]any{"deleted_at": now, "deleted_by": p.UserID,
			"updated_at": now, "updated_by": p.UserID})
		if err != nil || ok {
			return err
		}
		if _, err := s.load(ctx, e.ID); err != nil {
			return err
		}
		return apperr.Conflict("not_deletable", "Only an evaluation in "+def.InitialPhase+" can be deleted; it has moved on.")
	})
}

// VetoMasterDataDelete refuses deleting a supplier, project or department a
// live evaluation references (masterdata publishes the deletion in its
// transaction).
func (s *Service) VetoMasterDataDelete(ctx context.Context, e events.Event) error {
	return masterdata.Veto("purchase evaluation", s.store.referencing)(ctx, e)
}

// SupplierFacts is what procurement shows on a supplier (GET
// /api/suppliers/{id}): the approved evaluations it won, and the latest
// approval.
func (s *Service) SupplierFacts(ctx context.Context, supplierID string) (map[string]any, error) {
	n, last, err := s.store.approvedWins(ctx, supplierID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"approvedEvaluations": n, "lastApprovedAt": clock.UTC(last)}, nil
}
