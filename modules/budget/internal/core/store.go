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

// raw is the connection or transaction in ctx below GORM; exec and
// queryRow run the contract hook's statements on it, which are small
// enough that the ORM's work per statement would be most of their cost.
// Placeholders are $1…$n, numbered in order of first use, which both
// engines read so.
func (s *store) raw(ctx context.Context) gorm.ConnPool { return s.conn(ctx).Statement.ConnPool }

func (s *store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.raw(ctx).ExecContext(ctx, q, plain(args)...)
}

func (s *store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.raw(ctx).QueryRowContext(ctx, q, plain(args)...)
}

// plain turns the arguments the hook passes into driver values, which
// database/sql takes as they are instead of converting each by reflection
// (about 14 µs of a move's CPU for the reservation's arguments).
func plain(args []any) []any {
	for i, a := range args {
		switch v := a.(type) {
		case money.Amount:
			args[i] = int64(v)
		case *string:
			if args[i] = nil; v != nil {
				args[i] = *v
			}
		case *time.Time:
			if args[i] = nil; v != nil {
				args[i] = *v
			}
		}
	}
	return args
}

// heldKinds are the entry kinds a contract holds on its line.
const heldKinds = `('` + KindReserved + `', '` + KindCommitted + `')`

// reserve is the common case of the hook, a contract going to signature on
// a line of an Approved budget that funds its project, written without a
// read: the budget's totals (its row lock first, as every writer of a
// budget takes it), the line's — only while its remaining covers the value
// — and e, the Reserved entry. Every condition is checked by the statement
// that writes, on the row as it is when the statement locks it (Postgres
// re-checks it on the newest version; SQLite has one writer), so
// concurrent reservations never take more than remains; the totals move by
// exactly the entry's amount in the same transaction. One statement on
// Postgres, three on SQLite (which has no data-modifying CTE), none with
// RETURNING: SQLite builds an ephemeral table for it. It reports false,
// having changed nothing, when the move needs settle: the budget is not
// Approved or funds another project, the line is gone or short (under
// Warn too: settle warns), or the contract holds something on the line.
func (s *store) reserve(ctx context.Context, projectID *string, e *Commitment) (bool, error) {
	var budgeted, lined bool
	if s.db.Dialect() == db.Postgres {
		var nb, nl int
		err := s.queryRow(ctx, reservation(`SELECT (SELECT COUNT(*) FROM budget_totals), (SELECT COUNT(*) FROM line_totals)`),
			reservationArgs(projectID, e)...).Scan(&nb, &nl)
		if err != nil {
			return false, err
		}
		budgeted, lined = nb == 1, nl == 1
	} else {
		ceiling := money.Max - e.Amount
		var err error
		if budgeted, err = applied(s.exec(ctx, reserveBudget, e.Amount, e.BudgetLineID, ceiling, projectID)); err != nil || !budgeted {
			return false, err
		}
		if lined, err = applied(s.exec(ctx, reserveLine, e.Amount, e.BudgetLineID, ceiling, e.ContractID)); err != nil {
			return false, err
		}
		if lined {
			return true, s.insertEntry(ctx, e)
		}
	}
	if budgeted && !lined { // undo the budget's share
		_, err := s.exec(ctx, `UPDATE budgets SET reserved_total = reserved_total - $1, remaining = remaining + $1
			WHERE id = (SELECT budget_id FROM budget_lines WHERE id = $2)`, e.Amount, e.BudgetLineID)
		return false, err
	}
	return lined, nil
}

// reserveAhead is reserve for a speculative transaction on Postgres
// (db.Speculative): sent with the move's next statement, its
// compare-and-set, it takes no round trip of its own and its locks in the
// same order as reserve (the budget's, the line's, then the counters the
// move updates). If it does not apply, budget_expect fails the move, which
// runs again and calls reserve.
func (s *store) reserveAhead(ctx context.Context, projectID *string, e *Commitment) error {
	return s.db.ExecWithNext(ctx, reservation(`SELECT budget_expect(EXISTS (SELECT 1 FROM line_totals))`),
		plain(reservationArgs(projectID, e))...)
}

// The statements of a reservation. SQLite numbers $n parameters in order
// of first use: each statement lists its own in that order ($1 the amount,
// $2 the line, $3 the largest total the amount fits on, $4 the project,
// $5 the contract); Postgres numbers them as written.
const (
	reserveBudget = `UPDATE budgets SET reserved_total = reserved_total + $1, remaining = remaining - $1
		WHERE id = (SELECT budget_id FROM budget_lines WHERE id = $2 AND deleted_at IS NULL) AND deleted_at IS NULL
		AND reserved_total <= $3 AND status = '` + StatusApproved + `' AND (project_id IS NULL OR project_id = $4)`
	// Two NOT EXISTS of one kind each: for kind IN (…) SQLite builds an
	// ephemeral table of the values on every execution (twice the
	// statement's instructions).
	reserveLine = `UPDATE budget_lines SET reserved_amount = reserved_amount + $1, remaining = remaining - $1
		WHERE id = $2 AND deleted_at IS NULL AND reserved_amount <= $3 AND remaining >= $1
		AND NOT EXISTS (SELECT 1 FROM budget_commitments c WHERE c.budget_line_id = $2 AND c.closed_at IS NULL
			AND c.kind = '` + KindReserved + `' AND c.contract_id = $5)
		AND NOT EXISTS (SELECT 1 FROM budget_commitments c WHERE c.budget_line_id = $2 AND c.closed_at IS NULL
			AND c.kind = '` + KindCommitted + `' AND c.contract_id = $5)`
)

// reservation is the Postgres reservation as one statement, ending in
// final: the line's update waits for the budget's (EXISTS), which takes
// the budget's lock first; the entry goes in only if the line's applied.
func reservation(final string) string {
	return `WITH budget_totals AS (` + reserveBudget + ` RETURNING id),
		line_totals AS (` + reserveLine + ` AND EXISTS (SELECT 1 FROM budget_totals) RETURNING id),
		entry AS (INSERT INTO budget_commitments (id, budget_line_id, contract_id, amount, kind, note, source, created_at, created_by)
			SELECT CAST($6 AS VARCHAR(36)), id, $5, $1, CAST($7 AS VARCHAR(16)), CAST($8 AS TEXT), CAST($9 AS VARCHAR(16)),
				CAST($10 AS TIMESTAMP), CAST($11 AS VARCHAR(36)) FROM line_totals)
		` + final
}

func reservationArgs(projectID *string, e *Commitment) []any {
	return []any{e.Amount, e.BudgetLineID, money.Max - e.Amount, projectID, e.ContractID, e.ID, e.Kind, e.Note, e.Source, e.CreatedAt, e.CreatedBy}
}

// applied reports whether an UPDATE changed a row.
func applied(r sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// insertEntry writes one ledger entry.
func (s *store) insertEntry(ctx context.Context, e *Commitment) error {
	_, err := s.exec(ctx, `INSERT INTO budget_commitments
		(id, budget_line_id, contract_id, amount, kind, note, source, closed_at, superseded_by, created_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9, $10)`,
		e.ID, e.BudgetLineID, e.ContractID, e.Amount, e.Kind, e.Note, e.Source, e.ClosedAt, e.CreatedAt, e.CreatedBy)
	return err
}

// lineHolding is what the hook decides from: a line (live or deleted),
// its budget, and what one contract holds open on the line.
type lineHolding struct {
	LineCode, BudgetID, BudgetCode, Status, OnExceed, Currency string
	ProjectID                                                  *string
	Live                                                       bool // neither the line nor its budget is deleted
	Remaining, LineReserved, LineCommitted                     money.Amount
	BudgetReserved, BudgetCommitted                            money.Amount
	HeldReserved, HeldCommitted                                money.Amount // the contract's open entries
}

// holding reads a line, its budget and what contractID holds on it; false
// when the line does not exist. With lock, on Postgres, it takes the
// budget's row lock first, as every writer of a budget does: the line and
// the entries, read after it, then include every committed change and no
// other writer can change them until the transaction ends. (SQLite's one
// writer connection with IMMEDIATE transactions serializes writers
// already.) Two single-table statements rather than a join of the two
// tables, which SQLite prepared again at every execution (its parser ran
// each time in instruction counts); these stay prepared.
func (s *store) holding(ctx context.Context, lineID, contractID string, lock bool) (lineHolding, bool, error) {
	var h lineHolding
	q := `SELECT id, code, status, on_exceed, currency, project_id, reserved_total, committed_total, deleted_at IS NULL
		FROM budgets WHERE id = (SELECT budget_id FROM budget_lines WHERE id = $1)`
	if lock && s.db.Dialect() == db.Postgres {
		q += ` FOR UPDATE`
	}
	var budgetLive, lineLive bool
	err := s.queryRow(ctx, q, lineID).Scan(&h.BudgetID, &h.BudgetCode, &h.Status, &h.OnExceed, &h.Currency,
		&h.ProjectID, &h.BudgetReserved, &h.BudgetCommitted, &budgetLive)
	if errors.Is(err, sql.ErrNoRows) {
		return h, false, nil
	}
	if err != nil {
		return h, false, err
	}
	held := func(kind string) string {
		return `CAST(COALESCE((SELECT SUM(c.amount) FROM budget_commitments c WHERE c.contract_id = $1 AND c.budget_line_id = l.id
			AND c.closed_at IS NULL AND c.kind = '` + kind + `'), 0) AS BIGINT)`
	}
	err = s.queryRow(ctx, `SELECT `+held(KindReserved)+`, `+held(KindCommitted)+`,
		l.code, l.remaining, l.reserved_amount, l.committed_amount, l.deleted_at IS NULL FROM budget_lines l WHERE l.id = $2`,
		contractID, lineID).Scan(&h.HeldReserved, &h.HeldCommitted, &h.LineCode, &h.Remaining, &h.LineReserved, &h.LineCommitted, &lineLive)
	h.Live = budgetLive && lineLive
	return h, err == nil, err
}

// posting is one change the contract hook makes on a line: optionally the
// contract's open entries closed (superseded by Entry), Entry added, and
// the line's and the budget's totals moved by Reserved and Committed.
// Under the budget's lock the totals were exact before, so adding the
// same amounts the rows changed by keeps them exact.
type posting struct {
	CloseHeld           bool
	Reserved, Committed money.Amount
	Entry               Commitment
}

// post writes a posting: one statement on Postgres, whose data-modifying
// CTEs all run, and up to four on SQLite, which has none.
func (s *store) post(ctx context.Context, budgetID string, p posting) error {
	e := &p.Entry
	if s.db.Dialect() == db.Postgres {
		_, err := s.exec(ctx, `WITH closed_entries AS (UPDATE budget_commitments SET closed_at = $1, superseded_by = $2
			WHERE $3 AND contract_id = $4 AND budget_line_id = $5 AND closed_at IS NULL AND kind IN `+heldKinds+`),
		line_totals AS (UPDATE budget_lines SET reserved_amount = reserved_amount + $6, committed_amount = committed_amount + $7,
			remaining = remaining - $6 - $7 WHERE id = $5),
		budget_totals AS (UPDATE budgets SET reserved_total = reserved_total + $6, committed_total = committed_total + $7,
			remaining = remaining - $6 - $7 WHERE id = $8)
		INSERT INTO budget_commitments (id, budget_line_id, contract_id, amount, kind, note, source, closed_at, superseded_by, created_at, created_by)
		VALUES ($2, $5, $4, $9, $10, $11, $12, $13, NULL, $1, $14)`,
			e.CreatedAt, e.ID, p.CloseHeld, e.ContractID, e.BudgetLineID, p.Reserved, p.Committed, budgetID,
			e.Amount, e.Kind, e.Note, e.Source, e.ClosedAt, e.CreatedBy)
		return err
	}
	if p.CloseHeld {
		if _, err := s.exec(ctx, `UPDATE budget_commitments SET closed_at = $1, superseded_by = $2
			WHERE contract_id = $3 AND budget_line_id = $4 AND closed_at IS NULL AND kind IN `+heldKinds,
			e.CreatedAt, e.ID, e.ContractID, e.BudgetLineID); err != nil {
			return err
		}
	}
	if _, err := s.exec(ctx, `UPDATE budget_lines SET reserved_amount = reserved_amount + $1, committed_amount = committed_amount + $2,
		remaining = remaining - $1 - $2 WHERE id = $3`, p.Reserved, p.Committed, e.BudgetLineID); err != nil {
		return err
	}
	if _, err := s.exec(ctx, `UPDATE budgets SET reserved_total = reserved_total + $1, committed_total = committed_total + $2,
		remaining = remaining - $1 - $2 WHERE id = $3`, p.Reserved, p.Committed, budgetID); err != nil {
		return err
	}
	return s.insertEntry(ctx, e)
}

// heldLines lists the lines on which a contract holds open entries: its
// own line (lineID, nil for none), where the hook's entries are, and any
// line where entries were posted for it by hand.
func (s *store) heldLines(ctx context.Context, lineID *string, contractID string) ([]string, error) {
	rows, err := s.raw(ctx).QueryContext(ctx, `SELECT budget_line_id FROM budget_commitments
		WHERE budget_line_id = $1 AND closed_at IS NULL AND kind IN `+heldKinds+` AND contract_id = $2
		UNION SELECT budget_line_id FROM budget_commitments
		WHERE contract_id = $2 AND source = '`+SourceManual+`' AND closed_at IS NULL AND kind IN `+heldKinds+` ORDER BY 1`, lineID, contractID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// utilisation totals the budgets in force per project.
func (s *store) utilisation(ctx context.Context) ([]ProjectUtilisation, error) {
	return db.CollectRows(s.liveBudgets(ctx).
		Select("project_id, SUM(planned_total) AS planned, SUM(reserved_total) AS reserved, SUM(committed_total) AS committed, SUM(actual_total) AS actual").
		Where("project_id IS NOT NULL AND status IN ?", []string{StatusApproved, StatusClosed}).
		Group("project_id").Order("project_id"), 0, func(u *ProjectUtilisation) []any {
		return []any{&u.ProjectID, &u.Planned, &u.Reserved, &u.Committed, &u.Actual}
	})
}

// codeUsed reports whether any budget, live or deleted, has code (seeding
// skips those).
func (s *store) codeUsed(ctx context.Context, code string) (bool, error) {
	var n int64
	err := s.conn(ctx).Model(&Budget{}).Where("code = ?", code).Count(&n).Error
	return n > 0, err
}
