// Package core implements the reports module: the dashboard and the Excel
// export of contracts, read through the contracts module's Query.
package core

import (
	"context"
	"slices"
	"time"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/money"
)

// Service computes reports.
type Service struct {
	Contracts  contracts.Query
	MasterData masterdata.Lookup
	Directory  identity.Directory
	Clock      clock.Clock
	Location   *time.Location // the business time zone
}

// Dashboard is the statistics object of GET /api/reports/dashboard.
type Dashboard struct {
	TotalContracts       int64        `json:"totalContracts"`
	ActiveContracts      int64        `json:"activeContracts"`
	OverdueContracts     int64        `json:"overdueContracts"`
	PublishedThisMonth   int64        `json:"publishedThisMonth"`
	ActiveContractsValue money.Amount `json:"activeContractsValue"`
	ByPhase              []PhaseCount `json:"byPhase"`
	TopSuppliers         []Top        `json:"topSuppliers"`
	TopProjects          []Top        `json:"topProjects"`
	Monthly              []Month      `json:"monthly"`
}

// PhaseCount is the number of contracts in one phase.
type PhaseCount struct {
	Phase string `json:"phase"`
	Count int64  `json:"count"`
}

// Top is one supplier or project ranked by contract value.
type Top struct {
	ID            string       `json:"id"`
	Code          string       `json:"code"`
	Name          string       `json:"name"`
	ContractCount int64        `json:"contractCount"`
	TotalValue    money.Amount `json:"totalValue"`
}

// Month totals the contracts created in one calendar month.
type Month struct {
	Month      string       `json:"month"` // "2026-11"
	Count      int64        `json:"count"`
	TotalValue money.Amount `json:"totalValue"`
}

// topN is the length of the two rankings; months the length of the series.
const (
	topN   = 5
	months = 12
)

// Dashboard computes every figure with a handful of aggregate queries.
func (s *Service) Dashboard(ctx context.Context) (Dashboard, error) {
	now := s.Clock.Now()
	d := Dashboard{ByPhase: make([]PhaseCount, len(contracts.Phases))}
	totals, err := s.Contracts.PhaseTotals(ctx, now)
	if err != nil {
		return Dashboard{}, err
	}
	byPhase := map[string]contracts.PhaseTotal{}
	for _, t := range totals {
		byPhase[t.Phase] = t
	}
	for i, p := range contracts.Phases {
		t := byPhase[p]
		d.ByPhase[i] = PhaseCount{Phase: p, Count: t.Count}
		d.TotalContracts += t.Count
		if !slices.Contains(contracts.TerminalPhases, p) {
			d.ActiveContracts += t.Count
			d.ActiveContractsValue += t.Value
			d.OverdueContracts += t.Overdue
		}
	}

	bounds := monthBounds(now.In(s.Location), months)
	if d.PublishedThisMonth, err = s.Contracts.PublishedBetween(ctx, bounds[months-1], bounds[months]); err != nil {
		return Dashboard{}, err
	}
	if d.TopSuppliers, err = s.top(ctx, "supplier", s.MasterData.Suppliers); err != nil {
		return Dashboard{}, err
	}
	if d.TopProjects, err = s.top(ctx, "project", s.MasterData.Projects); err != nil {
		return Dashboard{}, err
	}
	periods, err := s.Contracts.CreatedIn(ctx, bounds)
	if err != nil {
		return Dashboard{}, err
	}
	d.Monthly = make([]Month, months)
	for i, p := range periods {
		d.Monthly[i] = Month{Month: bounds[i].Format("2006-01"), Count: p.Count, TotalValue: p.Value}
	}
	return d, nil
}

// monthBounds returns n+1 instants: the starts of the last n months in the
// business time zone (the current one last), then the start of the next.
func monthBounds(now time.Time, n int) []time.Time {
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location())
	out := make([]time.Time, n+1)
	for i := range out {
		out[i] = first.AddDate(0, i-(n-1), 0)
	}
	return out
}

func (s *Service) top(ctx context.Context, by string, resolve func(context.Context, []string) (map[string]masterdata.Ref, error)) ([]Top, error) {
	rows, err := s.Contracts.Top(ctx, by, topN)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	refs, err := resolve(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Top, len(rows))
	for i, r := range rows {
		ref := refs[r.ID]
		out[i] = Top{ID: r.ID, Code: ref.Code, Name: ref.Name, ContractCount: r.Count, TotalValue: r.Value}
	}
	return out, nil
}
