package core

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/notify"
)

// TopicOverdrawn is published when a contract reserves beyond its line's
// remaining amount under Warn.
const TopicOverdrawn = "budget.overdrawn"

// Overdrawn is published inside the move's transaction when a contract
// overdraws a line under Warn. It is notify.Notifiable: the notifications
// module stores, in that transaction, a notification to the contract's
// drafter and to the cost controllers and project managers who keep
// budgets (not to the person who moved it: the answer told them).
type Overdrawn struct {
	BudgetID, BudgetCode, LineID, LineCode string
	ContractID, ContractTitle, DrafterID   string
	ActorID                                *string // nil when the system moved the contract
	Amount                                 money.Amount
	RemainingBefore                        money.Amount
	Message                                string
	At                                     time.Time
}

func (Overdrawn) Topic() string { return TopicOverdrawn }

var _ notify.Notifiable = Overdrawn{}

// Notifications says whom to tell that a line was overdrawn.
func (o Overdrawn) Notifications() []notify.Draft {
	except := ""
	if o.ActorID != nil {
		except = *o.ActorID
	}
	return []notify.Draft{{Kind: TopicOverdrawn, Title: "Budget overdrawn: " + o.BudgetCode + " / " + o.LineCode,
		Body: o.ContractTitle + ": " + o.Message, EntityType: "contract", EntityID: o.ContractID,
		UserIDs: []string{o.DrafterID}, Roles: []string{"CostControl", "ProjectManager"}, ExceptUserID: except}}
}

// holding is what a contract holds on its line while in a phase: a
// reservation in DangTrinhKy and DangDongDau, a commitment once DaPhatHanh,
// nothing elsewhere (before signature, returned, rejected).
func holding(phase string) string {
	switch phase {
	case contracts.DangTrinhKy, contracts.DangDongDau:
		return KindReserved
	case contracts.DaPhatHanh:
		return KindCommitted
	}
	return ""
}

// OnContractMove is the hook on contract moves, run inside the move's
// transaction before its compare-and-set (so a refused or lost move undoes
// what it wrote). It brings what the contract holds on its line to what the
// phase it enters calls for:
//
//   - entering DangTrinhKy (or DangDongDau, or DaPhatHanh, without a
//     reservation — a definition that skips signature): the reservation
//     check — the line must exist, its budget must be Approved, not Closed,
//     and fund the contract's project; a value above the line's remaining
//     amount is refused under Block (409 budget_exceeded) and let through
//     with a warning under Warn;
//   - DangTrinhKy → DangDongDau: the reservation stays;
//   - entering DaPhatHanh holding a reservation: it becomes a commitment;
//   - leaving DangTrinhKy or DangDongDau for any other phase (TuChoi, or a
//     return): the reservation is released.
func (s *Service) OnContractMove(ctx context.Context, m *workflowdesigner.Moved) error {
	c, ok := contracts.SnapshotOf(m.Doc)
	if !ok || c.BudgetLineID == nil {
		return nil
	}
	want, had := holding(m.To), holding(m.From)
	if want == "" && had == "" {
		return nil // neither phase concerns the budget: no query at all
	}
	if want == KindReserved && had == "" {
		done, err := s.reserve(ctx, m, c)
		if done || err != nil {
			return err
		}
	}
	line, err := s.store.lineByID(ctx, *c.BudgetLineID)
	if db.IsNotFound(err) {
		if want == "" {
			return nil // the line is gone: nothing to release on it
		}
		return exceeded("The budget line this contract names no longer exists; name another line before signature.", *c.BudgetLineID)
	}
	if err != nil {
		return err
	}
	return s.mutateBudget(ctx, line.BudgetID, func(ctx context.Context, b *Budget) ([]string, error) {
		l, err := s.store.line(ctx, b.ID, line.ID)
		if err != nil {
			return nil, err
		}
		held, err := s.store.held(ctx, l.ID, &c.ID)
		if err != nil {
			return nil, err
		}
		var heldKind string
		var heldSum money.Amount
		ids := make([]string, len(held))
		for i, h := range held {
			heldKind, heldSum, ids[i] = h.Kind, heldSum+h.Amount, h.ID
		}
		entry := &Commitment{ID: uuid.Must(uuid.NewV7()).String(), BudgetLineID: l.ID, ContractID: &c.ID,
			Source: SourceContract, CreatedAt: m.At, CreatedBy: m.ActorID}
		switch {
		case want == "" && len(held) == 0:
			return nil, nil
		case want == "":
			entry.Kind, entry.Amount, entry.ClosedAt = KindReleased, heldSum, &m.At
			entry.Note = fmt.Sprintf("Released: contract moved %s → %s.", m.From, m.To)
		case len(held) > 0 && (heldKind == want || heldKind == KindCommitted):
			return nil, nil // already holds what the phase calls for
		case len(held) > 0: // a reservation becomes a commitment
			entry.Kind, entry.Amount = KindCommitted, heldSum
			entry.Note = fmt.Sprintf("Committed: contract moved %s → %s.", m.From, m.To)
		default:
			if err := s.checkReservation(ctx, m, c, b, l); err != nil {
				return nil, err
			}
			entry.Kind, entry.Amount = want, c.Value
			entry.Note = fmt.Sprintf("%s: contract moved %s → %s.", want, m.From, m.To)
		}
		if err := s.store.close(ctx, ids, m.At, entry.ID); err != nil {
			return nil, err
		}
		return []string{l.ID}, s.store.insert(ctx, entry)
	})
}

// reserve is the common case of the hook, a contract going to signature
// on a line of an Approved budget that funds its project, in three small
// statements: the budget's totals (its row lock first, as every writer of
// a budget takes it), the line's — only while its remaining covers the
// value, or under Warn — and the ledger entry. It reports false, having
// written nothing, when the move needs the full path: the budget is not
// Approved or funds another project, the line is gone or short under
// Block, or the contract already holds something on it; that path then
// answers with the exact reason.
func (s *Service) reserve(ctx context.Context, m *workflowdesigner.Moved, c contracts.Snapshot) (bool, error) {
	b, ok, err := s.store.reserveBudget(ctx, *c.BudgetLineID, c.ProjectID, c.Value)
	if err != nil || !ok {
		return false, err
	}
	l, ok, err := s.store.reserveLine(ctx, *c.BudgetLineID, c.ID, c.Value, b.OnExceed == ExceedWarn)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, s.store.reserveBudgetUndo(ctx, b.ID, c.Value)
	}
	entry := &Commitment{ID: uuid.Must(uuid.NewV7()).String(), BudgetLineID: l.ID, ContractID: &c.ID, Kind: KindReserved,
		Amount: c.Value, Source: SourceContract, CreatedAt: m.At, CreatedBy: m.ActorID,
		Note: fmt.Sprintf("%s: contract moved %s → %s.", KindReserved, m.From, m.To)}
	if err := s.store.insertEntry(ctx, entry); err != nil {
		return false, err
	}
	before := l.Remaining + c.Value
	if c.Value <= before {
		return true, nil
	}
	msg := fmt.Sprintf("Line %s of budget %s has %s %s remaining; this contract needs %s (short by %s).",
		l.Code, b.Code, before, b.Currency, c.Value, c.Value-before)
	m.Warn("Budget overdrawn: " + msg)
	return true, s.Bus.Publish(ctx, Overdrawn{BudgetID: b.ID, BudgetCode: b.Code, LineID: l.ID, LineCode: l.Code, ContractID: c.ID,
		ContractTitle: c.Title, DrafterID: c.DrafterID, ActorID: m.ActorID, Amount: c.Value, RemainingBefore: before, Message: msg, At: m.At})
}

// checkReservation decides whether a contract may take c.Value of line l
// of budget b; under Warn a shortfall becomes a warning on the move and an
// Overdrawn event.
func (s *Service) checkReservation(ctx context.Context, m *workflowdesigner.Moved, c contracts.Snapshot, b *Budget, l *Line) error {
	switch b.Status {
	case StatusDraft:
		return exceeded(fmt.Sprintf("Budget %s is not approved yet; approve it before a contract on line %s goes to signature.", b.Code, l.Code), l.ID)
	case StatusClosed:
		return exceeded(fmt.Sprintf("Budget %s is Closed and takes no new reservations; name a line of an open budget.", b.Code), l.ID)
	}
	if b.ProjectID != nil && (c.ProjectID == nil || !sameRef(b.ProjectID, c.ProjectID)) {
		return exceeded(fmt.Sprintf("Budget %s funds another project than this contract's.", b.Code), l.ID)
	}
	if err := fitsTotal("Value", l.ReservedAmount, c.Value); err != nil {
		return exceeded("The reservation would carry the line's total past the largest amount.", l.ID)
	}
	if err := fitsTotal("Value", b.ReservedTotal, c.Value); err != nil {
		return exceeded("The reservation would carry the budget's total past the largest amount.", l.ID)
	}
	if c.Value <= l.Remaining {
		return nil
	}
	msg := fmt.Sprintf("Line %s of budget %s has %s %s remaining; this contract needs %s (short by %s).",
		l.Code, b.Code, l.Remaining, b.Currency, c.Value, c.Value-l.Remaining)
	if b.OnExceed == ExceedBlock {
		return exceeded(msg+" The budget blocks overdrawing: adjust the line or name another.", l.ID).
			With("remaining", l.Remaining).With("required", c.Value)
	}
	m.Warn("Budget overdrawn: " + msg)
	return s.Bus.Publish(ctx, Overdrawn{BudgetID: b.ID, BudgetCode: b.Code, LineID: l.ID, LineCode: l.Code, ContractID: c.ID,
		ContractTitle: c.Title, DrafterID: c.DrafterID, ActorID: m.ActorID, Amount: c.Value, RemainingBefore: l.Remaining, Message: msg, At: m.At})
}

func exceeded(detail, lineID string) *apperr.Error {
	return apperr.Conflict("budget_exceeded", detail).With("budgetLineId", lineID)
}

// CheckContractLine refuses, inside the transaction that drafts or edits a
// contract, a budgetLineId naming a missing line, a line of a Closed
// budget, or a line of a budget that funds another project (400 on
// BudgetLineId). A budget without a project funds any project.
func (s *Service) CheckContractLine(ctx context.Context, e events.Event) error {
	var lineID, projectID *string
	switch ev := e.(type) {
	case contracts.Created:
		lineID, projectID = ev.BudgetLineID, ev.ProjectID
	case contracts.Updated:
		lineID, projectID = ev.BudgetLineID, ev.ProjectID
	default:
		return nil
	}
	if lineID == nil {
		return nil
	}
	bad := func(msg string) error { return apperr.FieldError("BudgetLineId", msg) }
	if _, err := uuid.Parse(*lineID); err != nil {
		return bad("Must be a UUID.")
	}
	l, err := s.store.lineByID(ctx, *lineID)
	if db.IsNotFound(err) {
		return bad("No such budget line.")
	}
	if err != nil {
		return err
	}
	b, err := s.store.budget(ctx, l.BudgetID, false)
	if db.IsNotFound(err) {
		return bad("No such budget line.")
	}
	if err != nil {
		return err
	}
	switch {
	case b.Status == StatusClosed:
		return bad("Budget " + b.Code + " is Closed; name a line of an open budget.")
	case b.ProjectID != nil && (projectID == nil || !sameRef(b.ProjectID, projectID)):
		return bad("Line " + l.Code + " belongs to budget " + b.Code + ", which funds another project.")
	}
	return nil
}

// ReleaseDeletedContract releases, inside the deleting transaction, what a
// deleted contract still holds on any line.
func (s *Service) ReleaseDeletedContract(ctx context.Context, e events.Event) error {
	d, ok := e.(contracts.Deleted)
	if !ok {
		return nil
	}
	held, err := s.store.heldByContract(ctx, d.ContractID)
	if err != nil || len(held) == 0 {
		return err
	}
	byLine := map[string][]Commitment{}
	var order []string
	for _, h := range held {
		if _, seen := byLine[h.BudgetLineID]; !seen {
			order = append(order, h.BudgetLineID)
		}
		byLine[h.BudgetLineID] = append(byLine[h.BudgetLineID], h)
	}
	now := s.now()
	for _, lineID := range order {
		var l Line
		if err := s.DB.Conn(ctx).Where("id = ?", lineID).Take(&l).Error; err != nil {
			return err
		}
		err := s.DB.InTx(ctx, func(ctx context.Context) error {
			if _, err := s.store.budget(ctx, l.BudgetID, true); err != nil && !db.IsNotFound(err) {
				return err
			}
			// Read again under the lock: a concurrent move may have changed it.
			rows, err := s.store.held(ctx, lineID, &d.ContractID)
			if err != nil || len(rows) == 0 {
				return err
			}
			entry := &Commitment{ID: uuid.Must(uuid.NewV7()).String(), BudgetLineID: lineID, ContractID: &d.ContractID,
				Kind: KindReleased, Source: SourceContract, Note: "Released: contract deleted.", ClosedAt: &now, CreatedAt: now}
			ids := make([]string, len(rows))
			for i, r := range rows {
				entry.Amount += r.Amount
				ids[i] = r.ID
			}
			if err := s.store.close(ctx, ids, now, entry.ID); err != nil {
				return err
			}
			if err := s.store.insert(ctx, entry); err != nil {
				return err
			}
			return s.store.recompute(ctx, l.BudgetID, lineID)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
