package core

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
)

// store is the only code that touches the budget tables.
type store struct {
	db *db.DB
}

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

func (s *store) liveBudgets(ctx context.Context) *gorm.DB {
	return s.conn(ctx).Model(&Budget{}).Where("budgets.deleted_at IS NULL")
}

// budget returns a live budget. With lock, inside a transaction on
// Postgres, the row stays locked until the transaction ends: every change
// to a budget, its lines or their ledgers takes this lock first, so the
// totals recomputed afterwards see every committed change and concurrent
// writers of one budget queue. (SQLite has one writer connection whose
// transactions begin IMMEDIATE: writers queue already.)
func (s *store) budget(ctx context.Context, id string, lock bool) (*Budget, error) {
	q := s.liveBudgets(ctx).Where("id = ?", id)
	if lock && s.db.Dialect() == db.Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var b Budget
	if err := q.Take(&b).Error; err != nil {
		return nil, err
	}
	return &b, nil
}

type listFilter struct {
	ProjectID  string
	FiscalYear *int
	Status     string
	Words      []string
}

func (s *store) list(ctx context.Context, f listFilter, req paging.Request) ([]Budget, int64, error) {
	q := s.liveBudgets(ctx)
	if f.ProjectID != "" {
		q = q.Where("project_id = ?", f.ProjectID)
	}
	if f.FiscalYear != nil {
		q = q.Where("fiscal_year = ?", *f.FiscalYear)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	for _, w := range f.Words {
		q = search.Match(q, "budgets", false, w)
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var rows []Budget
	if total == 0 {
		return rows, 0, nil
	}
	err := db.Page(q, req).Find(&rows).Error
	return rows, total, err
}

func (s *store) insert(ctx context.Context, v any) error { return s.conn(ctx).Create(v).Error }

// updateBudget writes cols over the version read; false when it changed.
func (s *store) updateBudget(ctx context.Context, id string, version int, cols map[string]any) (bool, error) {
	cols["version"] = gorm.Expr("version + 1")
	r := s.liveBudgets(ctx).Where("id = ? AND version = ?", id, version).Updates(cols)
	return r.RowsAffected == 1, r.Error
}

// deleteBudget soft-deletes a budget and its lines.
func (s *store) deleteBudget(ctx context.Context, id string, by *string, now time.Time) error {
	cols := map[string]any{"deleted_at": now, "deleted_by": by, "updated_at": now, "updated_by": by}
	if err := s.conn(ctx).Model(&Line{}).Where("budget_id = ? AND deleted_at IS NULL", id).Updates(cols).Error; err != nil {
		return err
	}
	return s.liveBudgets(ctx).Where("id = ?", id).Updates(cols).Error
}

func (s *store) liveLines(ctx context.Context) *gorm.DB {
	return s.conn(ctx).Model(&Line{}).Where("budget_lines.deleted_at IS NULL")
}

// line returns a live line of a budget.
func (s *store) line(ctx context.Context, budgetID, id string) (*Line, error) {
	var l Line
	if err := s.liveLines(ctx).Where("id = ? AND budget_id = ?", id, budgetID).Take(&l).Error; err != nil {
		return nil, err
	}
	return &l, nil
}

// lineByID returns a live line whatever its budget.
func (s *store) lineByID(ctx context.Context, id string) (*Line, error) {
	var l Line
	if err := s.liveLines(ctx).Where("id = ?", id).Take(&l).Error; err != nil {
		return nil, err
	}
	return &l, nil
}

func (s *store) lines(ctx context.Context, budgetID string) ([]Line, error) {
	var rows []Line
	err := s.liveLines(ctx).Where("budget_id = ?", budgetID).Order("code").Find(&rows).Error
	return rows, err
}

func (s *store) updateLine(ctx context.Context, id string, version int, cols map[string]any) (bool, error) {
	cols["version"] = gorm.Expr("version + 1")
	r := s.liveLines(ctx).Where("id = ? AND version = ?", id, version).Updates(cols)
	return r.RowsAffected == 1, r.Error
}

func (s *store) deleteLine(ctx context.Context, id string, by *string, now time.Time) error {
	return s.liveLines(ctx).Where("id = ?", id).
		Updates(map[string]any{"deleted_at": now, "deleted_by": by, "updated_at": now, "updated_by": by}).Error
}

// countEntries counts every ledger entry of a line, open or closed.
func (s *store) countEntries(ctx context.Context, lineID string) (int64, error) {
	var n int64
	err := s.conn(ctx).Model(&Commitment{}).Where("budget_line_id = ?", lineID).Count(&n).Error
	return n, err
}

// openEntries lists the open ledger entries of lines, oldest first.
func (s *store) openEntries(ctx context.Context, lineIDs []string) ([]Commitment, error) {
	var rows []Commitment
	if len(lineIDs) == 0 {
		return rows, nil
	}
	err := s.conn(ctx).Where("budget_line_id IN ? AND closed_at IS NULL", lineIDs).Order("created_at, id").Find(&rows).Error
	return rows, err
}

func (s *store) adjustments(ctx context.Context, lineIDs []string) ([]Adjustment, error) {
	var rows []Adjustment
	if len(lineIDs) == 0 {
		return rows, nil
	}
	err := s.conn(ctx).Where("budget_line_id IN ?", lineIDs).Order("created_at, id").Find(&rows).Error
	return rows, err
}

// held returns the open Reserved and Committed entries of a contract on a
// line, or with contractID nil the open ones posted without a contract.
func (s *store) held(ctx context.Context, lineID string, contractID *string) ([]Commitment, error) {
	q := s.conn(ctx).Where("budget_line_id = ? AND closed_at IS NULL AND kind IN ?", lineID, []string{KindReserved, KindCommitted})
	if contractID == nil {
		q = q.Where("contract_id IS NULL")
	} else {
		q = q.Where("contract_id = ?", *contractID)
	}
	var rows []Commitment
	err := q.Order("created_at, id").Find(&rows).Error
	return rows, err
}

// heldByContract returns the open entries a contract holds on any line.
func (s *store) heldByContract(ctx context.Context, contractID string) ([]Commitment, error) {
	var rows []Commitment
	err := s.conn(ctx).Where("contract_id = ? AND closed_at IS NULL AND kind IN ?", contractID, []string{KindReserved, KindCommitted}).
		Order("budget_line_id, created_at, id").Find(&rows).Error
	return rows, err
}

// close marks entries closed, superseded by the entry that replaced them.
func (s *store) close(ctx context.Context, ids []string, now time.Time, by string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.conn(ctx).Model(&Commitment{}).Where("id IN ? AND closed_at IS NULL", ids).
		Updates(map[string]any{"closed_at": now, "superseded_by": by}).Error
}

// recompute sets a line's totals from its adjustments and open entries,
// then its budget's totals from its live lines. Each figure is a sum over
// rows, never an increment, so whatever the order of concurrent writers the
// totals equal the rows once the budget's lock is released.
func (s *store) recompute(ctx context.Context, budgetID string, lineIDs ...string) error {
	c := s.conn(ctx)
	open := func(kind string) string {
		return `COALESCE((SELECT SUM(c.amount) FROM budget_commitments c WHERE c.budget_line_id = budget_lines.id AND c.closed_at IS NULL AND c.kind = '` + kind + `'), 0)`
	}
	for _, id := range lineIDs {
		if err := c.Exec(`UPDATE budget_lines SET
			adjustments_total = COALESCE((SELECT SUM(a.delta) FROM budget_adjustments a WHERE a.budget_line_id = budget_lines.id), 0),
			reserved_amount = `+open(KindReserved)+`,
			committed_amount = `+open(KindCommitted)+`,
			actual_amount = `+open(KindActual)+`
			WHERE id = ?`, id).Error; err != nil {
			return err
		}
		if err := c.Exec(`UPDATE budget_lines SET planned_amount = original_amount + adjustments_total,
			remaining = original_amount + adjustments_total - reserved_amount - committed_amount - actual_amount
			WHERE id = ?`, id).Error; err != nil {
			return err
		}
	}
	sum := func(col string) string {
		return `COALESCE((SELECT SUM(l.` + col + `) FROM budget_lines l WHERE l.budget_id = budgets.id AND l.deleted_at IS NULL), 0)`
	}
	if err := c.Exec(`UPDATE budgets SET
		planned_total = `+sum("planned_amount")+`,
		adjustments_total = `+sum("adjustments_total")+`,
		reserved_total = `+sum("reserved_amount")+`,
		committed_total = `+sum("committed_amount")+`,
		actual_total = `+sum("actual_amount")+`
		WHERE id = ?`, budgetID).Error; err != nil {
		return err
	}
	return c.Exec(`UPDATE budgets SET remaining = planned_total - reserved_total - committed_total - actual_total WHERE id = ?`, budgetID).Error
}

// raw runs a statement below GORM on the transaction in ctx (the contract
// hook's statements are small enough that the ORM's work per statement
// would be most of their cost). Placeholders are $1…$n, numbered in order
// of first use, which both engines read so.
func (s *store) raw(ctx context.Context) gorm.ConnPool { return s.conn(ctx).Statement.ConnPool }

// reservedBudget is what the hook's reservation needs of the budget.
type reservedBudget struct {
	ID, Code, OnExceed, Currency string
}

// reserveBudget adds amount to the reserved total of the budget of a live
// line, provided the budget is live, Approved and funds projectID (or any
// project), and the total stays within money.Max. It takes the budget's
// row lock, as every other writer of the budget does first. False when no
// budget qualified.
func (s *store) reserveBudget(ctx context.Context, lineID string, projectID *string, amount money.Amount) (reservedBudget, bool, error) {
	var b reservedBudget
	err := s.raw(ctx).QueryRowContext(ctx, `UPDATE budgets SET reserved_total = reserved_total + $1, remaining = remaining - $1
		WHERE id = (SELECT budget_id FROM budget_lines WHERE id = $2 AND deleted_at IS NULL)
		AND deleted_at IS NULL AND status = $3 AND (project_id IS NULL OR project_id = $4) AND reserved_total <= $5
		RETURNING id, code, on_exceed, currency`,
		amount, lineID, StatusApproved, projectID, money.Max-amount).Scan(&b.ID, &b.Code, &b.OnExceed, &b.Currency)
	if errors.Is(err, sql.ErrNoRows) {
		return b, false, nil
	}
	return b, err == nil, err
}

// reserveBudgetUndo takes back what reserveBudget added.
func (s *store) reserveBudgetUndo(ctx context.Context, budgetID string, amount money.Amount) error {
	_, err := s.raw(ctx).ExecContext(ctx, `UPDATE budgets SET reserved_total = reserved_total - $1, remaining = remaining + $1 WHERE id = $2`,
		amount, budgetID)
	return err
}

// reservedLine is what the hook's reservation needs of the line, after it.
type reservedLine struct {
	ID, Code  string
	Remaining money.Amount
}

// reserveLine adds amount to a live line's reserved amount, provided its
// remaining covers it (or overdraw is allowed), its total stays within
// money.Max and the contract holds nothing open on it. The condition is
// checked on the row as it is when the update locks it, so concurrent
// reservations never take more than remains. False when it did not apply.
func (s *store) reserveLine(ctx context.Context, lineID, contractID string, amount money.Amount, overdraw bool) (reservedLine, bool, error) {
	l := reservedLine{ID: lineID}
	err := s.raw(ctx).QueryRowContext(ctx, `UPDATE budget_lines SET reserved_amount = reserved_amount + $1, remaining = remaining - $1
		WHERE id = $2 AND deleted_at IS NULL AND (remaining >= $1 OR $3) AND reserved_amount <= $4
		AND NOT EXISTS (SELECT 1 FROM budget_commitments c WHERE c.contract_id = $5 AND c.budget_line_id = $2
			AND c.closed_at IS NULL AND c.kind IN ($6, $7))
		RETURNING code, remaining`,
		amount, lineID, overdraw, money.Max-amount, contractID, KindReserved, KindCommitted).Scan(&l.Code, &l.Remaining)
	if errors.Is(err, sql.ErrNoRows) {
		return l, false, nil
	}
	return l, err == nil, err
}

// insertEntry writes one ledger entry.
func (s *store) insertEntry(ctx context.Context, c *Commitment) error {
	_, err := s.raw(ctx).ExecContext(ctx, `INSERT INTO budget_commitments
		(id, budget_line_id, contract_id, amount, kind, note, source, closed_at, superseded_by, created_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		c.ID, c.BudgetLineID, c.ContractID, c.Amount, c.Kind, c.Note, c.Source, c.ClosedAt, c.SupersededBy, c.CreatedAt, c.CreatedBy)
	return err
}

// utilisation totals the budgets in force per project.
func (s *store) utilisation(ctx context.Context) ([]ProjectUtilisation, error) {
	var rows []struct {
		ProjectID                            string
		Planned, Reserved, Committed, Actual money.Amount
	}
	err := s.liveBudgets(ctx).
		Select("project_id, SUM(planned_total) AS planned, SUM(reserved_total) AS reserved, SUM(committed_total) AS committed, SUM(actual_total) AS actual").
		Where("project_id IS NOT NULL AND status IN ?", []string{StatusApproved, StatusClosed}).
		Group("project_id").Order("project_id").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]ProjectUtilisation, len(rows))
	for i, r := range rows {
		out[i] = ProjectUtilisation{ProjectID: r.ProjectID, Planned: r.Planned, Reserved: r.Reserved, Committed: r.Committed, Actual: r.Actual}
	}
	return out, nil
}

// codeUsed reports whether any budget, live or deleted, has code (seeding
// skips those).
func (s *store) codeUsed(ctx context.Context, code string) (bool, error) {
	var n int64
	err := s.conn(ctx).Model(&Budget{}).Where("code = ?", code).Count(&n).Error
	return n > 0, err
}
