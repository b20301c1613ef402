package core

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// TerminalPhases are the phases a contract ends in.
var TerminalPhases = []string{DaPhatHanh, TuChoi}

// PhaseTotals groups the live contracts by phase in one query.
func (s *Service) PhaseTotals(ctx context.Context, now time.Time) ([]PhaseTotal, error) {
	var rows []PhaseTotal
	err := s.store.live(ctx).
		Select("contracts.phase AS phase, COUNT(*) AS count, COALESCE(SUM(contracts.value), 0) AS value, "+
			"COALESCE(SUM(CASE WHEN contracts.sla_deadline < ? THEN 1 ELSE 0 END), 0) AS overdue", now).
		Group("contracts.phase").Scan(&rows).Error
	return rows, err
}

// PublishedBetween counts live contracts that entered DaPhatHanh in [from, to).
func (s *Service) PublishedBetween(ctx context.Context, from, to time.Time) (int64, error) {
	var n int64
	err := s.store.conn(ctx).Table("contract_approvals").
		Joins("JOIN contracts ON contracts.id = contract_approvals.contract_id AND contracts.deleted_at IS NULL").
		Where("contract_approvals.to_phase = ? AND contract_approvals.approved_at >= ? AND contract_approvals.approved_at < ?", DaPhatHanh, from, to).
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
		Select(column+" AS id, COUNT(*) AS count, SUM(contracts.value) AS value").
		Where("contracts.phase <> ? AND "+column+" IS NOT NULL", TuChoi).
		Group(column).Order("value DESC, id").Limit(n).Scan(&rows).Error
	return rows, err
}

// CreatedIn counts and sums the live contracts created in each period
// [bounds[i], bounds[i+1]) in one query: the periods are computed by the
// caller (in the business time zone), so months are right whatever the
// database's own time-zone support.
func (s *Service) CreatedIn(ctx context.Context, bounds []time.Time) ([]PeriodTotal, error) {
	if len(bounds) < 2 {
		return nil, nil
	}
	var cases strings.Builder
	args := []any{}
	cases.WriteString("CASE")
	for i := 0; i+1 < len(bounds); i++ {
		fmt.Fprintf(&cases, " WHEN contracts.created_at >= ? AND contracts.created_at < ? THEN %d", i)
		args = append(args, bounds[i], bounds[i+1])
	}
	cases.WriteString(" END")
	var rows []struct {
		Period int
		Count  int64
		Value  money.Amount
	}
	err := s.store.live(ctx).
		Select(cases.String()+" AS period, COUNT(*) AS count, SUM(contracts.value) AS value", args...).
		Where("contracts.created_at >= ? AND contracts.created_at < ?", bounds[0], bounds[len(bounds)-1]).
		Group("period").Scan(&rows).Error
	if err != nil {
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
			q = q.Where("contracts.created_at >= ?", f.From)
		}
		if !f.To.IsZero() {
			q = q.Where("contracts.created_at < ?", f.To)
		}
		if !first {
			q = q.Where("(contracts.created_at > ? OR (contracts.created_at = ? AND contracts.id > ?))", afterAt, afterAt, afterID)
		}
		var rows []ExportRow
		if err := q.Order("contracts.created_at, contracts.id").Limit(exportPage).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		if err := fn(rows); err != nil {
			return err
		}
		if len(rows) < exportPage {
			return nil
		}
		last := rows[len(rows)-1]
		afterAt, afterID, first = last.CreatedAt, last.ID, false
	}
}
