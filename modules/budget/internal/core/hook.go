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
	why := cause{at: m.At, actor: m.ActorID, why: "contract moved " + m.From + " → " + m.To, move: m}
	if want == KindReserved && had == "" {
		e := why.entry(*c.BudgetLineID, c.ID)
		e.Kind, e.Amount, e.Note = KindReserved, c.Value, why.note(KindReserved)
		if db.Speculative(ctx) {
			// Postgres: sent with the move's compare-and-set, on the hope
			// that it fits (it almost always does); if not, the move runs
			// again and settles.
			return s.store.reserveAhead(ctx, c.ProjectID, &e)
		}
		if done, err := s.store.reserve(ctx, c.ProjectID, &e); done || err != nil {
			return err
		}
	}
	return s.settle(ctx, *c.BudgetLineID, c, want, why)
}

// cause is why the hook changes what a contract holds: a move (the Warn
// path needs it), or a deletion.
type cause struct {
	at    time.Time
	actor *string
	why   string // ends each entry's note
	move  *workflowdesigner.Moved
}

// entry starts the ledger entry of contractID on a line that this change adds.
func (why cause) entry(lineID, contractID string) Commitment {
	return Commitment{ID: uuid.Must(uuid.NewV7()).String(), BudgetLineID: lineID, ContractID: &contractID,
		Source: SourceContract, CreatedAt: why.at, CreatedBy: why.actor}
}

// note is the note of an entry of kind this change adds.
func (why cause) note(kind string) string { return kind + ": " + why.why + "." }

// settle brings what contract c holds on a line to want (an entry kind, or
// "" for nothing), inside the caller's transaction: under the budget's
// lock it reads the line, its budget and c's open entries, decides here,
// and writes at most one posting — three statements on Postgres (lock and
// budget, line and entries, write), up to six on SQLite. A move that
// changes nothing writes nothing. It answers every case reserve leaves,
// with the exact reason when it refuses.
func (s *Service) settle(ctx context.Context, lineID string, c contracts.Snapshot, want string, why cause) error {
	h, found, err := s.store.holding(ctx, lineID, c.ID, true)
	if err != nil {
		return err
	}
	held := h.HeldReserved + h.HeldCommitted
	p := posting{Entry: why.entry(lineID, c.ID)}
	e, over := &p.Entry, false
	switch {
	case want == "" && held == 0:
		return nil
	case want == "": // released, wherever the line is now
		p.CloseHeld, p.Reserved, p.Committed = true, -h.HeldReserved, -h.HeldCommitted
		e.Kind, e.Amount, e.ClosedAt = KindReleased, held, &why.at
	case held > 0 && (want == KindReserved || h.HeldReserved == 0):
		return nil // already holds what the phase calls for (a commitment stays one)
	case held > 0: // the reservation becomes a commitment, no check
		p.CloseHeld, p.Reserved, p.Committed = true, -h.HeldReserved, h.HeldReserved
		e.Kind, e.Amount = KindCommitted, held
	case !found || !h.Live:
		return exceeded("The budget line this contract names no longer exists; name another line before signature.", lineID)
	default:
		if err := checkReservation(c, want, &h, lineID); err != nil {
			return err
		}
		e.Kind, e.Amount, over = want, c.Value, c.Value > h.Remaining
		if want == KindReserved {
			p.Reserved = c.Value
		} else {
			p.Committed = c.Value
		}
	}
	e.Note = why.note(e.Kind)
	if err := s.store.post(ctx, h.BudgetID, p); err != nil {
		return err
	}
	if !over {
		return nil
	}
	// Overdrawn under Warn (Block refused it above).
	msg := h.shortfall(c.Value)
	why.move.Warn("Budget overdrawn: " + msg)
	return s.Bus.Publish(ctx, Overdrawn{BudgetID: h.BudgetID, BudgetCode: h.BudgetCode, LineID: lineID, LineCode: h.LineCode,
		ContractID: c.ID, ContractTitle: c.Title, DrafterID: c.DrafterID, ActorID: why.actor, Amount: c.Value,
		RemainingBefore: h.Remaining, Message: msg, At: why.at})
}

// checkReservation decides whether contract c may newly hold c.Value of a
// line as want; a shortfall under Warn passes (settle warns once written).
func checkReservation(c contracts.Snapshot, want string, h *lineHolding, lineID string) error {
	switch h.Status {
	case StatusDraft:
		return exceeded(fmt.Sprintf("Budget %s is not approved yet; approve it before a contract on line %s goes to signature.", h.BudgetCode, h.LineCode), lineID)
	case StatusClosed:
		return exceeded(fmt.Sprintf("Budget %s is Closed and takes no new reservations; name a line of an open budget.", h.BudgetCode), lineID)
	}
	if h.ProjectID != nil && (c.ProjectID == nil || !sameRef(h.ProjectID, c.ProjectID)) {
		return exceeded(fmt.Sprintf("Budget %s funds another project than this contract's.", h.BudgetCode), lineID)
	}
	line, budget := h.LineReserved, h.BudgetReserved
	if want == KindCommitted {
		line, budget = h.LineCommitted, h.BudgetCommitted
	}
	if fitsTotal("Value", line, c.Value) != nil {
		return exceeded("The reservation would carry the line's total past the largest amount.", lineID)
	}
	if fitsTotal("Value", budget, c.Value) != nil {
		return exceeded("The reservation would carry the budget's total past the largest amount.", lineID)
	}
	if c.Value <= h.Remaining || h.OnExceed != ExceedBlock {
		return nil
	}
	return exceeded(h.shortfall(c.Value)+" The budget blocks overdrawing: adjust the line or name another.", lineID).
		With("remaining", h.Remaining).With("required", c.Value)
}

// shortfall says by how much the line's remaining amount misses value.
func (h *lineHolding) shortfall(value money.Amount) string {
	return fmt.Sprintf("Line %s of budget %s has %s %s remaining; this contract needs %s (short by %s).",
		h.LineCode, h.BudgetCode, h.Remaining, h.Currency, value, value-h.Remaining)
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
	h, found, err := s.store.holding(ctx, *lineID, "", false)
	if err != nil {
		return err
	}
	if !found || !h.Live {
		return bad("No such budget line.")
	}
	switch {
	case h.Status == StatusClosed:
		return bad("Budget " + h.BudgetCode + " is Closed; name a line of an open budget.")
	case h.ProjectID != nil && (projectID == nil || !sameRef(h.ProjectID, projectID)):
		return bad("Line " + h.LineCode + " belongs to budget " + h.BudgetCode + ", which funds another project.")
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
	lines, err := s.store.heldLines(ctx, d.BudgetLineID, d.ContractID)
	if err != nil {
		return err
	}
	why := cause{at: s.now(), why: "contract deleted"}
	for _, lineID := range lines {
		if err := s.settle(ctx, lineID, contracts.Snapshot{ID: d.ContractID}, "", why); err != nil {
			return err
		}
	}
	return nil
}
