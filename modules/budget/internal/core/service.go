// Package core implements the budget module: budgets, lines, their ledger
// of commitments and adjustments, and the check on contract moves.
package core

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
)

// Deps are the services the module uses, owned by other modules or the platform.
type Deps struct {
	DB         *db.DB
	Clock      clock.Clock
	Bus        *events.Bus
	MasterData masterdata.Lookup
	Location   *time.Location // the business time zone (the demo budgets' fiscal year)
}

// Service implements the budget endpoints, the contract hook and Utilisation.
type Service struct {
	Deps
	store *store
}

// New builds the service.
func New(d Deps) *Service { return &Service{Deps: d, store: &store{db: d.DB}} }

func (s *Service) now() time.Time { return s.Clock.Now() }

func budgetNotFound() *apperr.Error { return apperr.NotFound("Budget") }
func lineNotFound() *apperr.Error   { return apperr.NotFound("Budget line") }

func actor(p authn.Principal) *string {
	if p.UserID == "" {
		return nil
	}
	id := p.UserID
	return &id
}

var codePattern = regexp.MustCompile(`^[A-Z0-9_-]{2,32}$`)

// checkCodeName normalises a code (trimmed, upper case) and a name and
// reports what is wrong with them.
func checkCodeName(code, name *string, f apperr.Fields) {
	*code = strings.ToUpper(strings.TrimSpace(*code))
	*name = strings.TrimSpace(*name)
	switch {
	case *code == "":
		f.Add("Code", "Is required.")
	case !codePattern.MatchString(*code):
		f.Add("Code", "Must be 2 to 32 characters, each a letter A-Z, a digit, '-' or '_'.")
	}
	switch n := len([]rune(*name)); {
	case n == 0:
		f.Add("Name", "Is required.")
	case n > 200:
		f.Add("Name", "Must be at most 200 characters long.")
	}
}

// merge adds the field errors of err (a validation error) to f; any other
// error is returned.
func merge(f apperr.Fields, err error) error {
	if err == nil {
		return nil
	}
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindValidation {
		return err
	}
	for k, msgs := range e.Fields {
		for _, m := range msgs {
			f.Add(k, m)
		}
	}
	return nil
}

// getBudget returns a live budget; malformed ids are unknown ones.
func (s *Service) getBudget(ctx context.Context, id string, lock bool) (*Budget, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, budgetNotFound()
	}
	b, err := s.store.budget(ctx, id, lock)
	if db.IsNotFound(err) {
		return nil, budgetNotFound()
	}
	return b, err
}

// getLine returns a live line of a live budget.
func (s *Service) getLine(ctx context.Context, budgetID, id string) (*Line, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, lineNotFound()
	}
	l, err := s.store.line(ctx, budgetID, id)
	if db.IsNotFound(err) {
		return nil, lineNotFound()
	}
	return l, err
}

// List answers GET /api/budgets.
func (s *Service) List(ctx context.Context, f listFilter, req paging.Request) (paging.Page[BudgetDTO], error) {
	f.Words = search.Words(req.Search)
	rows, total, err := s.store.list(ctx, f, req)
	if err != nil {
		return paging.Page[BudgetDTO]{}, err
	}
	items := make([]BudgetDTO, len(rows))
	for i := range rows {
		items[i] = budgetDTO(&rows[i])
	}
	return paging.NewPage(items, req, total), nil
}

// parseListFilter reads the filters of GET /api/budgets.
func parseListFilter(get func(string) string) (listFilter, error) {
	f := listFilter{ProjectID: get("projectId"), Status: get("status")}
	fields := apperr.Fields{}
	if f.ProjectID != "" {
		if _, err := uuid.Parse(f.ProjectID); err != nil {
			fields.Add("ProjectId", "Must be a UUID.")
		}
	}
	if y := get("fiscalYear"); y != "" {
		n, err := strconv.Atoi(y)
		if err != nil {
			fields.Add("FiscalYear", "Must be a whole number.")
		}
		f.FiscalYear = &n
	}
	switch f.Status {
	case "", StatusDraft, StatusApproved, StatusClosed:
	default:
		fields.Add("Status", "Must be one of: Draft, Approved, Closed.")
	}
	return f, fields.Err()
}

// Get answers GET /api/budgets/{id}: the budget, its lines with their
// totals, open entries and adjustments.
func (s *Service) Get(ctx context.Context, id string) (Detail, error) {
	b, err := s.getBudget(ctx, id, false)
	if err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, b)
}

func (s *Service) detail(ctx context.Context, b *Budget) (Detail, error) {
	lines, err := s.store.lines(ctx, b.ID)
	if err != nil {
		return Detail{}, err
	}
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i] = l.ID
	}
	entries, err := s.store.openEntries(ctx, ids)
	if err != nil {
		return Detail{}, err
	}
	adjs, err := s.store.adjustments(ctx, ids)
	if err != nil {
		return Detail{}, err
	}
	byLine := map[string][]Commitment{}
	for _, c := range entries {
		byLine[c.BudgetLineID] = append(byLine[c.BudgetLineID], c)
	}
	adjByLine := map[string][]Adjustment{}
	for _, a := range adjs {
		adjByLine[a.BudgetLineID] = append(adjByLine[a.BudgetLineID], a)
	}
	d := Detail{BudgetDTO: budgetDTO(b), Lines: make([]LineDTO, len(lines))}
	for i := range lines {
		d.Lines[i] = lineDTO(&lines[i], byLine[lines[i].ID], adjByLine[lines[i].ID])
	}
	return d, nil
}

// lineDetail reads one line back with its open entries and adjustments.
func (s *Service) lineDetail(ctx context.Context, budgetID, lineID string) (LineDTO, error) {
	l, err := s.store.line(ctx, budgetID, lineID)
	if err != nil {
		return LineDTO{}, err
	}
	entries, err := s.store.openEntries(ctx, []string{lineID})
	if err != nil {
		return LineDTO{}, err
	}
	adjs, err := s.store.adjustments(ctx, []string{lineID})
	if err != nil {
		return LineDTO{}, err
	}
	return lineDTO(l, entries, adjs), nil
}

// validateBudget normalises and checks a budget body, including that the
// project and department it names exist.
func (s *Service) validateBudget(ctx context.Context, in *BudgetInput) error {
	f := apperr.Fields{}
	checkCodeName(&in.Code, &in.Name, f)
	if err := merge(f, httpx.Validate(in)); err != nil {
		return err
	}
	if in.Currency == "" {
		in.Currency = "VND"
	}
	if in.OnExceed == "" {
		in.OnExceed = ExceedBlock
	}
	if in.ProjectID != nil && f["ProjectId"] == nil {
		if _, err := s.MasterData.Project(ctx, *in.ProjectID); err != nil {
			if apperr.KindOf(err) != apperr.KindNotFound {
				return err
			}
			f.Add("ProjectId", "No such project.")
		}
	}
	if in.DepartmentID != nil && f["DepartmentId"] == nil {
		if _, err := s.MasterData.Department(ctx, *in.DepartmentID); err != nil {
			if apperr.KindOf(err) != apperr.KindNotFound {
				return err
			}
			f.Add("DepartmentId", "No such department.")
		}
	}
	return f.Err()
}

func duplicateBudget(code string) error {
	return apperr.Conflict("duplicate_code", "Another budget already has the code "+code+"; choose another code.")
}

// Create answers POST /api/budgets: a new Draft budget without lines.
func (s *Service) Create(ctx context.Context, p authn.Principal, in BudgetInput) (Detail, error) {
	if err := s.validateBudget(ctx, &in); err != nil {
		return Detail{}, err
	}
	if in.Status != "" && in.Status != StatusDraft {
		return Detail{}, apperr.FieldError("Status", "A new budget is Draft; approve it with POST /api/budgets/{id}/approve.")
	}
	now := s.now()
	b := &Budget{ID: uuid.Must(uuid.NewV7()).String(), Code: in.Code, Name: in.Name, ProjectID: in.ProjectID,
		DepartmentID: in.DepartmentID, FiscalYear: in.FiscalYear, Currency: in.Currency, Status: StatusDraft,
		OnExceed: in.OnExceed, Description: in.Description, SearchText: search.Text(in.Code, in.Name), Version: 1,
		CreatedAt: now, CreatedBy: actor(p), UpdatedAt: now, UpdatedBy: actor(p)}
	err := s.store.insert(ctx, b)
	if db.IsUniqueViolation(err) {
		return Detail{}, duplicateBudget(in.Code)
	}
	if err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, b)
}

// Update answers PUT /api/budgets/{id}. A Draft budget changes freely; of
// an Approved one only name, description and onExceed change, and status
// Closed closes it; a Closed budget no longer changes.
func (s *Service) Update(ctx context.Context, p authn.Principal, id string, in BudgetInput) (Detail, error) {
	cur, err := s.getBudget(ctx, id, false)
	if err != nil {
		return Detail{}, err
	}
	if err := s.validateBudget(ctx, &in); err != nil {
		return Detail{}, err
	}
	var out *Budget
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		b, err := s.getBudget(ctx, cur.ID, true)
		if err != nil {
			return err
		}
		if in.Version != nil && *in.Version != b.Version {
			return apperr.StaleVersion()
		}
		status := in.Status
		if status == "" {
			status = b.Status
		}
		now := s.now()
		cols := map[string]any{"name": in.Name, "description": in.Description, "on_exceed": in.OnExceed,
			"search_text": search.Text(b.Code, in.Name), "updated_at": now, "updated_by": actor(p)}
		switch {
		case b.Status == StatusClosed:
			return apperr.Conflict("not_editable", "Budget "+b.Code+" is Closed and can no longer change.")
		case status == b.Status:
		case b.Status == StatusApproved && status == StatusClosed:
			cols["status"], cols["closed_at"], cols["closed_by"] = StatusClosed, now, actor(p)
		case status == StatusApproved:
			return apperr.Conflict("invalid_transition", "Approve a Draft budget with POST /api/budgets/{id}/approve.")
		default:
			return apperr.Conflict("invalid_transition", "A budget cannot go from "+b.Status+" to "+status+"; only an Approved budget can be Closed.")
		}
		if b.Status == StatusDraft {
			cols["code"], cols["project_id"], cols["department_id"] = in.Code, in.ProjectID, in.DepartmentID
			cols["fiscal_year"], cols["currency"] = in.FiscalYear, in.Currency
			cols["search_text"] = search.Text(in.Code, in.Name)
		} else if frozen := frozenChanges(b, &in); len(frozen) > 0 {
			return apperr.Conflict("not_editable", "Of an Approved budget only name, description and onExceed change; "+
				strings.Join(frozen, ", ")+" cannot.")
		}
		ok, err := s.store.updateBudget(ctx, b.ID, b.Version, cols)
		if db.IsUniqueViolation(err) {
			return duplicateBudget(in.Code)
		}
		if err != nil {
			return err
		}
		if !ok {
			return apperr.StaleVersion()
		}
		out, err = s.store.budget(ctx, b.ID, false)
		return err
	})
	if err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, out)
}

// frozenChanges names the fields of an Approved budget that in would change.
func frozenChanges(b *Budget, in *BudgetInput) []string {
	var out []string
	if in.Code != b.Code {
		out = append(out, "code")
	}
	if !sameRef(in.ProjectID, b.ProjectID) {
		out = append(out, "projectId")
	}
	if !sameRef(in.DepartmentID, b.DepartmentID) {
		out = append(out, "departmentId")
	}
	if in.FiscalYear != b.FiscalYear {
		out = append(out, "fiscalYear")
	}
	if in.Currency != b.Currency {
		out = append(out, "currency")
	}
	return out
}

func sameRef(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return strings.EqualFold(*a, *b)
}

// Delete answers DELETE /api/budgets/{id}: a Draft budget only, soft.
func (s *Service) Delete(ctx context.Context, p authn.Principal, id string) error {
	if _, err := s.getBudget(ctx, id, false); err != nil {
		return err
	}
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		b, err := s.getBudget(ctx, id, true)
		if err != nil {
			return err
		}
		if b.Status != StatusDraft {
			return apperr.Conflict("not_deletable", "Budget "+b.Code+" is "+b.Status+"; only a Draft budget can be deleted.")
		}
		return s.store.deleteBudget(ctx, b.ID, actor(p), s.now())
	})
}

// Approve answers POST /api/budgets/{id}/approve: Draft → Approved, which
// freezes the planned amounts. A budget without lines cannot be approved.
func (s *Service) Approve(ctx context.Context, p authn.Principal, id string) (Detail, error) {
	if _, err := s.getBudget(ctx, id, false); err != nil {
		return Detail{}, err
	}
	var out *Budget
	err := s.DB.InTx(ctx, func(ctx context.Context) error {
		b, err := s.getBudget(ctx, id, true)
		if err != nil {
			return err
		}
		if b.Status != StatusDraft {
			return apperr.Conflict("invalid_transition", "Budget "+b.Code+" is "+b.Status+"; only a Draft budget can be approved.")
		}
		lines, err := s.store.lines(ctx, b.ID)
		if err != nil {
			return err
		}
		if len(lines) == 0 {
			return apperr.Conflict("invalid_transition", "Add at least one line before approving budget "+b.Code+".")
		}
		now := s.now()
		ok, err := s.store.updateBudget(ctx, b.ID, b.Version, map[string]any{"status": StatusApproved, "approved_at": now,
			"approved_by": actor(p), "updated_at": now, "updated_by": actor(p)})
		if err != nil {
			return err
		}
		if !ok {
			return apperr.StaleVersion()
		}
		out, err = s.store.budget(ctx, b.ID, false)
		return err
	})
	if err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, out)
}

// checkLine normalises and checks a line body. create says whether
// plannedAmount is required.
func checkLine(in *LineInput, create bool) error {
	f := apperr.Fields{}
	checkCodeName(&in.Code, &in.Name, f)
	if in.Category != nil {
		if c := strings.TrimSpace(*in.Category); c != "" {
			in.Category = &c
		} else {
			in.Category = nil
		}
	}
	if err := merge(f, httpx.Validate(in)); err != nil {
		return err
	}
	switch {
	case in.PlannedAmount == nil && create:
		f.Add("PlannedAmount", "Is required.")
	case in.PlannedAmount != nil && *in.PlannedAmount <= 0:
		f.Add("PlannedAmount", "Must be greater than 0.")
	}
	return f.Err()
}

func duplicateLine(code string) error {
	return apperr.Conflict("duplicate_code", "Another line of this budget already has the code "+code+"; choose another code.")
}

// mutateBudget runs fn in a transaction holding the budget's lock, then
// recomputes the totals of the lines fn names (those it wrote; a deleted
// line's too) and of the budget, then runs
// the optional then (which reads the answer: in the transaction, so that a
// concurrent delete cannot take the row away between write and read).
func (s *Service) mutateBudget(ctx context.Context, budgetID string, fn func(ctx context.Context, b *Budget) ([]string, error),
	then ...func(ctx context.Context) error) error {
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		b, err := s.getBudget(ctx, budgetID, true)
		if err != nil {
			return err
		}
		lines, err := fn(ctx, b)
		if err != nil {
			return err
		}
		if len(lines) > 0 { // nothing written, nothing to recompute
			if err := s.store.recompute(ctx, b.ID, lines...); err != nil {
				return err
			}
		}
		for _, f := range then {
			if err := f(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// readLine returns a then for mutateBudget that reads a line's answer into out.
func (s *Service) readLine(budgetID, lineID string, out *LineDTO) func(ctx context.Context) error {
	return func(ctx context.Context) (err error) {
		*out, err = s.lineDetail(ctx, budgetID, lineID)
		return err
	}
}

// fitsTotal refuses a change that would carry a sum past the largest
// amount (the database sums stay exact within int64 that way).
func fitsTotal(field string, parts ...money.Amount) error {
	var sum money.Amount
	for _, p := range parts {
		sum += p
		if sum > money.Max || sum < -money.Max {
			return apperr.FieldError(field, fmt.Sprintf("The total would exceed %s, the largest amount.", money.Max))
		}
	}
	return nil
}

// CreateLine answers POST /api/budgets/{id}/lines (Draft budgets only:
// the planned amounts of an Approved budget change through adjustments).
func (s *Service) CreateLine(ctx context.Context, p authn.Principal, budgetID string, in LineInput) (LineDTO, error) {
	if _, err := s.getBudget(ctx, budgetID, false); err != nil {
		return LineDTO{}, err
	}
	if err := checkLine(&in, true); err != nil {
		return LineDTO{}, err
	}
	now := s.now()
	var out LineDTO
	l := &Line{ID: uuid.Must(uuid.NewV7()).String(), BudgetID: budgetID, Code: in.Code, Name: in.Name, Category: in.Category,
		OriginalAmount: *in.PlannedAmount, PlannedAmount: *in.PlannedAmount, Remaining: *in.PlannedAmount, Version: 1,
		CreatedAt: now, CreatedBy: actor(p), UpdatedAt: now, UpdatedBy: actor(p)}
	err := s.mutateBudget(ctx, budgetID, func(ctx context.Context, b *Budget) ([]string, error) {
		if b.Status != StatusDraft {
			return nil, apperr.Conflict("not_editable", "Budget "+b.Code+" is "+b.Status+"; lines are added while it is Draft (planned amounts of an Approved budget change through adjustments).")
		}
		if err := fitsTotal("PlannedAmount", b.PlannedTotal, l.PlannedAmount); err != nil {
			return nil, err
		}
		err := s.store.insert(ctx, l)
		if db.IsUniqueViolation(err) {
			return nil, duplicateLine(in.Code)
		}
		return []string{l.ID}, err
	}, s.readLine(budgetID, l.ID, &out))
	return out, err
}

// UpdateLine answers PUT /api/budgets/{id}/lines/{lineId}. Code, name and
// category change while the budget is not Closed; the planned amount only
// while it is Draft.
func (s *Service) UpdateLine(ctx context.Context, p authn.Principal, budgetID, lineID string, in LineInput) (LineDTO, error) {
	if _, err := s.getBudget(ctx, budgetID, false); err != nil {
		return LineDTO{}, err
	}
	if _, err := s.getLine(ctx, budgetID, lineID); err != nil {
		return LineDTO{}, err
	}
	if err := checkLine(&in, false); err != nil {
		return LineDTO{}, err
	}
	var out LineDTO
	err := s.mutateBudget(ctx, budgetID, func(ctx context.Context, b *Budget) ([]string, error) {
		l, err := s.getLine(ctx, budgetID, lineID)
		if err != nil {
			return nil, err
		}
		if in.Version != nil && *in.Version != l.Version {
			return nil, apperr.StaleVersion()
		}
		cols := map[string]any{"code": in.Code, "name": in.Name, "category": in.Category, "updated_at": s.now(), "updated_by": actor(p)}
		switch {
		case b.Status == StatusClosed:
			return nil, apperr.Conflict("not_editable", "Budget "+b.Code+" is Closed and can no longer change.")
		case in.PlannedAmount == nil || *in.PlannedAmount == l.PlannedAmount:
		case b.Status != StatusDraft:
			return nil, apperr.Conflict("not_editable", "Budget "+b.Code+" is Approved: change the planned amount through an adjustment with a reason (POST …/lines/{lineId}/adjustments).")
		default:
			if err := fitsTotal("PlannedAmount", b.PlannedTotal, -l.PlannedAmount, *in.PlannedAmount); err != nil {
				return nil, err
			}
			cols["original_amount"] = *in.PlannedAmount - l.AdjustmentsTotal
		}
		ok, err := s.store.updateLine(ctx, l.ID, l.Version, cols)
		if db.IsUniqueViolation(err) {
			return nil, duplicateLine(in.Code)
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apperr.StaleVersion()
		}
		return []string{l.ID}, nil
	}, s.readLine(budgetID, lineID, &out))
	return out, err
}

// DeleteLine answers DELETE /api/budgets/{id}/lines/{lineId}: a line of a
// Draft budget with no ledger entry at all.
func (s *Service) DeleteLine(ctx context.Context, p authn.Principal, budgetID, lineID string) error {
	if _, err := s.getBudget(ctx, budgetID, false); err != nil {
		return err
	}
	if _, err := s.getLine(ctx, budgetID, lineID); err != nil {
		return err
	}
	return s.mutateBudget(ctx, budgetID, func(ctx context.Context, b *Budget) ([]string, error) {
		l, err := s.getLine(ctx, budgetID, lineID)
		if err != nil {
			return nil, err
		}
		n, err := s.store.countEntries(ctx, l.ID)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, apperr.Conflict("not_deletable", "Line "+l.Code+" has commitments; a line with commitments cannot be deleted.")
		}
		if b.Status != StatusDraft {
			return nil, apperr.Conflict("not_deletable", "Budget "+b.Code+" is "+b.Status+"; lines are deleted only while it is Draft.")
		}
		return []string{l.ID}, s.store.deleteLine(ctx, l.ID, actor(p), s.now())
	})
}

// Adjust answers POST …/lines/{lineId}/adjustments: an Approved budget's
// planned amount moves by delta (either sign), never below zero.
func (s *Service) Adjust(ctx context.Context, p authn.Principal, budgetID, lineID string, in AdjustmentInput) (PostedAdjustment, error) {
	if _, err := s.getBudget(ctx, budgetID, false); err != nil {
		return PostedAdjustment{}, err
	}
	if _, err := s.getLine(ctx, budgetID, lineID); err != nil {
		return PostedAdjustment{}, err
	}
	in.Reason = strings.TrimSpace(in.Reason)
	if err := httpx.Validate(in); err != nil {
		return PostedAdjustment{}, err
	}
	if *in.Delta == 0 {
		return PostedAdjustment{}, apperr.FieldError("Delta", "Must not be 0.")
	}
	a := &Adjustment{ID: uuid.Must(uuid.NewV7()).String(), BudgetLineID: lineID, Delta: *in.Delta, Reason: in.Reason,
		CreatedAt: s.now(), CreatedBy: actor(p)}
	var line LineDTO
	err := s.mutateBudget(ctx, budgetID, func(ctx context.Context, b *Budget) ([]string, error) {
		if b.Status != StatusApproved {
			return nil, apperr.Conflict("not_editable", "Budget "+b.Code+" is "+b.Status+"; adjustments apply to an Approved budget (a Draft one is edited directly).")
		}
		l, err := s.getLine(ctx, budgetID, lineID)
		if err != nil {
			return nil, err
		}
		if l.PlannedAmount+a.Delta < 0 {
			return nil, apperr.FieldError("Delta", fmt.Sprintf("Would make the planned amount negative: line %s plans %s.", l.Code, l.PlannedAmount))
		}
		if err := fitsTotal("Delta", l.PlannedAmount, a.Delta); err != nil {
			return nil, err
		}
		if err := fitsTotal("Delta", b.PlannedTotal, a.Delta); err != nil {
			return nil, err
		}
		return []string{l.ID}, s.store.insert(ctx, a)
	}, s.readLine(budgetID, lineID, &line))
	if err != nil {
		return PostedAdjustment{}, err
	}
	return PostedAdjustment{AdjustmentDTO: adjustmentDTO(a), Line: line}, nil
}

// Commit answers POST …/lines/{lineId}/commitments: bookkeeping, recorded
// even beyond the remaining amount. Reserved, Committed and Actual add an
// open entry (a Closed budget takes no new Reserved); Released closes what
// the named contract (or, without contractId, what entries posted without
// a contract) holds on the line, and its amount must equal that.
func (s *Service) Commit(ctx context.Context, p authn.Principal, budgetID, lineID string, in CommitmentInput) (PostedCommitment, error) {
	if _, err := s.getBudget(ctx, budgetID, false); err != nil {
		return PostedCommitment{}, err
	}
	if _, err := s.getLine(ctx, budgetID, lineID); err != nil {
		return PostedCommitment{}, err
	}
	in.Note = strings.TrimSpace(in.Note)
	if err := httpx.Validate(in); err != nil {
		return PostedCommitment{}, err
	}
	if *in.Amount <= 0 {
		return PostedCommitment{}, apperr.FieldError("Amount", "Must be greater than 0.")
	}
	now := s.now()
	c := &Commitment{ID: uuid.Must(uuid.NewV7()).String(), BudgetLineID: lineID, ContractID: in.ContractID, Amount: *in.Amount,
		Kind: in.Kind, Note: in.Note, Source: SourceManual, CreatedAt: now, CreatedBy: actor(p)}
	if in.Kind == KindReleased {
		c.ClosedAt = &now // a release never counts
	}
	var line LineDTO
	err := s.mutateBudget(ctx, budgetID, func(ctx context.Context, b *Budget) ([]string, error) {
		l, err := s.getLine(ctx, budgetID, lineID)
		if err != nil {
			return nil, err
		}
		if in.Kind == KindReleased {
			return []string{l.ID}, s.releaseByHand(ctx, l, c)
		}
		if in.Kind == KindReserved && b.Status == StatusClosed {
			return nil, apperr.Conflict("not_editable", "Budget "+b.Code+" is Closed and takes no new reservations.")
		}
		bucket, total := l.ReservedAmount, b.ReservedTotal
		switch in.Kind {
		case KindCommitted:
			bucket, total = l.CommittedAmount, b.CommittedTotal
		case KindActual:
			bucket, total = l.ActualAmount, b.ActualTotal
		}
		if err := fitsTotal("Amount", bucket, c.Amount); err != nil {
			return nil, err
		}
		if err := fitsTotal("Amount", total, c.Amount); err != nil {
			return nil, err
		}
		return []string{l.ID}, s.store.insert(ctx, c)
	}, s.readLine(budgetID, lineID, &line))
	if err != nil {
		return PostedCommitment{}, err
	}
	return PostedCommitment{CommitmentDTO: commitmentDTO(c), Line: line}, nil
}

// releaseByHand closes the entries c's contract (or no contract) holds on
// l and records c, the release, for exactly their sum.
func (s *Service) releaseByHand(ctx context.Context, l *Line, c *Commitment) error {
	held, err := s.store.held(ctx, l.ID, c.ContractID)
	if err != nil {
		return err
	}
	if len(held) == 0 {
		who := "entries posted without a contract"
		if c.ContractID != nil {
			who = "contract " + *c.ContractID
		}
		return apperr.FieldError("Kind", "Nothing is reserved or committed on line "+l.Code+" for "+who+" to release.")
	}
	var sum money.Amount
	ids := make([]string, len(held))
	for i, h := range held {
		sum += h.Amount
		ids[i] = h.ID
	}
	if sum != c.Amount {
		return apperr.FieldError("Amount", fmt.Sprintf("Must equal the amount held, %s.", sum))
	}
	if err := s.store.close(ctx, ids, c.CreatedAt, c.ID); err != nil {
		return err
	}
	return s.store.insert(ctx, c)
}

// ByProject implements budget.Utilisation.
func (s *Service) ByProject(ctx context.Context) ([]ProjectUtilisation, error) {
	return s.store.utilisation(ctx)
}
