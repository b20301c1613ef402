package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/money"
)

// The reporting queries other modules use (reports): aggregates computed by
// the database, and exports streamed in pages, never whole tables in memory.

// PhaseTotal aggregates the live contracts of one phase.
type PhaseTotal struct {
	Phase   string
	Count   int64
	Value   money.Amount
	Overdue int64 // with a deadline before now
}

// GroupTotal aggregates live, not rejected contracts of one supplier or project.
type GroupTotal struct {
	ID    string
	Count int64
	Value money.Amount
}

// PeriodTotal aggregates contracts created in one period.
type PeriodTotal struct {
	Count int64
	Value money.Amount
}

// ExportFilter narrows an export; From and To bound the creation time
// (From inclusive, To exclusive) and are zero when open.
type ExportFilter struct {
	Phase, SupplierID, ProjectID string
	From, To                     time.Time
}

// ExportRow is one contract of an export.
type ExportRow struct {
	ID, Title, ContractType, Phase string
	MaHopDong                      *string
	SupplierID                     string
	ProjectID                      *string
	Value                          money.Amount
	SLADeadline                    *time.Time
	DrafterID                      string
	CreatedAt                      time.Time
}

// dbTime is how an instant goes into a comparison with a timestamp column:
// in UTC, like every stored timestamp. Neither engine compares instants:
// SQLite compares the text the driver writes ("2026-11-01 00:00:00+07:00"
// sorts after "2026-10-31 17:00:00+00:00", the same instant), and pgx binds
// a TIMESTAMP parameter as the wall clock of its zone. A caller passing
// month starts in the business zone would shift every bound by the offset.
func dbTime(t time.Time) time.Time { return t.UTC() }

// TerminalPhases are the phases a contract ends in.
var TerminalPhases = []string{DaPhatHanh, TuChoi}

// PhaseTotals groups the live contracts by phase in one query. The overdue
// count of each of the nine groups is a range of the (phase, sla_deadline,
// …) index rather than a comparison on every row.
func (s *Service) PhaseTotals(ctx context.Context, now time.Time) ([]PhaseTotal, error) {
	var rows []PhaseTotal
	err := s.store.conn(ctx).Raw(`SELECT p.phase AS phase, COUNT(*) AS count, COALESCE(SUM(p.value), 0) AS value,
			(SELECT COUNT(*) FROM contracts o WHERE o.deleted_at IS NULL AND o.phase = p.phase AND o.sla_deadline < ?) AS overdue
		FROM contracts p WHERE p.deleted_at IS NULL GROUP BY p.phase`, dbTime(now)).Scan(&rows).Error
	return rows, err
}

// PublishedBetween counts live contracts that entered DaPhatHanh in [from, to).
func (s *Service) PublishedBetween(ctx context.Context, from, to time.Time) (int64, error) {
	var n int64
	err := s.store.conn(ctx).Table("contract_approvals").
		Joins("JOIN contracts ON contracts.id = contract_approvals.contract_id AND contracts.deleted_at IS NULL").
		Where("contract_approvals.to_phase = ? AND contract_approvals.approved_at >= ? AND contract_approvals.approved_at < ?", DaPhatHanh, dbTime(from), dbTime(to)).
		Distinct("contract_approvals.contract_id").Count(&n).Error
	return n, err
}

// Top ranks suppliers ("supplier") or projects ("project") by the value of
// their live, not rejected contracts.
func (s *Service) Top(ctx context.Context, by string, n int) ([]GroupTotal, error) {
	column := map[string]string{"supplier": "contracts.supplier_id", "project": "contracts.project_id"}[by]
	if column == "" {
		return nil, fmt.Errorf("top by %q: want supplier or project", by)
	}
	var rows []GroupTotal
	err := s.store.live(ctx).
		Select(column + " AS id, COUNT(*) AS count, SUM(contracts.value) AS value").
		// A literal, not a parameter: the planners match it to the partial
		// indexes ix_contracts_report_supplier and _project (migration 3).
		Where("contracts.phase <> '" + TuChoi + "' AND " + column + " IS NOT NULL").
		Group(column).Order("value DESC, id").Limit(n).Scan(&rows).Error
	return rows, err
}

// CreatedIn counts and sums the live contracts created in each period
// [bounds[i], bounds[i+1]) in one query: the periods are computed by the
// caller (in the business time zone), so months are right whatever the
// database's own time-zone support. Each period is its own range over the
// (created_at, …, value) index, joined with UNION ALL: one CASE over all
// periods cost a dozen comparisons per row, ten times the time on SQLite.
func (s *Service) CreatedIn(ctx context.Context, bounds []time.Time) ([]PeriodTotal, error) {
	if len(bounds) < 2 {
		return nil, nil
	}
	parts := make([]string, 0, len(bounds)-1)
	args := make([]any, 0, 2*(len(bounds)-1))
	for i := 0; i+1 < len(bounds); i++ {
		parts = append(parts, fmt.Sprintf("SELECT %d AS period, COUNT(*) AS count, COALESCE(SUM(value), 0) AS value "+
			"FROM contracts WHERE deleted_at IS NULL AND created_at >= ? AND created_at < ?", i))
		args = append(args, dbTime(bounds[i]), dbTime(bounds[i+1]))
	}
	var rows []struct {
		Period int
		Count  int64
		Value  money.Amount
	}
	if err := s.store.conn(ctx).Raw(strings.Join(parts, " UNION ALL "), args...).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]PeriodTotal, len(bounds)-1)
	for _, r := range rows {
		if r.Period >= 0 && r.Period < len(out) {
			out[r.Period] = PeriodTotal{Count: r.Count, Value: r.Value}
		}
	}
	return out, nil
}

// exportPage is how many rows an export reads per query.
const exportPage = 2000

// Export streams the live contracts matching f, oldest first, to fn one
// page at a time (keyset paging on created_at, id), so memory stays flat
// however many rows there are.
func (s *Service) Export(ctx context.Context, f ExportFilter, fn func([]ExportRow) error) error {
	var afterAt time.Time
	afterID := ""
	first := true
	for {
		q := s.store.live(ctx).Select("contracts.id, contracts.title, contracts.contract_type, contracts.phase, contracts.ma_hop_dong, " +
			"contracts.supplier_id, contracts.project_id, contracts.value, contracts.sla_deadline, contracts.drafter_id, contracts.created_at")
		if f.Phase != "" {
			q = q.Where("contracts.phase = ?", f.Phase)
		}
		if f.SupplierID != "" {
			q = q.Where("contracts.supplier_id = ?", f.SupplierID)
		}
		if f.ProjectID != "" {
			q = q.Where("contracts.project_id = ?", f.ProjectID)
		}
		if !f.From.IsZero() {
			q = q.Where("contracts.created_at >= ?", dbTime(f.From))
		}
		if !f.To.IsZero() {
			q = q.Where("contracts.created_at < ?", dbTime(f.To))
		}
		if !first {
			// A row value, so both engines seek the (created_at, id) index
			// to the cursor instead of reading every earlier row again.
			q = q.Where("(contracts.created_at, contracts.id) > (?, ?)", dbTime(afterAt), afterID)
		}
		page, err := scanExportPage(q.Order("contracts.created_at, contracts.id").Limit(exportPage))
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		if err := fn(page); err != nil {
			return err
		}
		if len(page) < exportPage {
			return nil
		}
		last := page[len(page)-1]
		afterAt, afterID, first = last.CreatedAt, last.ID, false
	}
}

// scanExportPage reads one page with plain Scan calls: GORM's reflective
// scan into structs took a third of the database side of an export. The
// connection is released before fn sees the rows.
func scanExportPage(q *gorm.DB) ([]ExportRow, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := make([]ExportRow, 0, exportPage)
	for rows.Next() {
		var r ExportRow
		if err := rows.Scan(&r.ID, &r.Title, &r.ContractType, &r.Phase, &r.MaHopDong, &r.SupplierID, &r.ProjectID,
			&r.Value, &r.SLADeadline, &r.DrafterID, &r.CreatedAt); err != nil {
			return nil, err
		}
		page = append(page, r)
	}
	return page, rows.Err()
}
