// Package core implements the reports module: the dashboard and the Excel
// export of contracts, read through the contracts module's Query.
package core

import (
	"context"
	"slices"
	"time"

	"github.com/contractflow/contractflow/modules/budget"
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
	Location   *time.Location     // the business time zone
	Language   string             // business.language: the words of the export, "vi" or "en"
	Budgets    budget.Utilisation // nil when the budget module is off
}

// Dashboard is the statistics object of GET /api/reports/dashboard.
type Dashboard struct {
	TotalContracts       int64         `json:"totalContracts"`
	ActiveContracts      int64         `json:"activeContracts"`
	OverdueContracts     int64         `json:"overdueContracts"`
	PublishedThisMonth   int64         `json:"publishedThisMonth"`
	ActiveContractsValue money.Amount  `json:"activeContractsValue"`
	ByPhase              []PhaseCount  `json:"byPhase"`
	TopSuppliers         []TopSupplier `json:"topSuppliers"`
	TopProjects          []TopProject  `json:"topProjects"`
	Monthly              []Month       `json:"monthly"`
	// BudgetUtilisation is present only with the budget module on.
	BudgetUtilisation *[]BudgetUse `json:"budgetUtilisation,omitempty"`
}

// BudgetUse is one project's budgets in force: planned money (adjustments
// included) against what reservations and commitments hold of it.
type BudgetUse struct {
	ProjectID string       `json:"projectId"`
	Code      string       `json:"code,omitempty"` // absent when the project was deleted
	Name      string       `json:"name,omitempty"`
	Planned   money.Amount `json:"planned"`
	Committed money.Amount `json:"committed"`
	Reserved  money.Amount `json:"reserved"`
}

// PhaseCount is the number of contracts in one phase.
type PhaseCount struct {
	Phase string `json:"phase"`
	Count int64  `json:"count"`
}

// Top is one supplier or project ranked by the value of its contracts.
type Top struct {
	Code          string       `json:"code"`
	Name          string       `json:"name"`
	ContractCount int64        `json:"contractCount"`
	TotalValue    money.Amount `json:"totalValue"`
}

// TopSupplier is a ranked supplier: {supplierId, code, name, contractCount,
// totalValue} (DESIGN §9).
type TopSupplier struct {
	SupplierID string `json:"supplierId"`
	Top
}

// TopProject is a ranked project, the same shape keyed by projectId.
type TopProject struct {
	ProjectID string `json:"projectId"`
	Top
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

// Dashboard computes every figure with five aggregate queries over covering
// indexes, one after another. (Run side by side on separate reader
// connections they took more CPU and, under load, longer: each connection
// warms its own page cache.)
func (s *Service) Dashboard(ctx context.Context) (Dashboard, error) {
	now := s.Clock.Now()
	bounds := monthBounds(now.In(s.Location), months)
	totals, err := s.Contracts.PhaseTotals(ctx, now)
	if err != nil {
		return Dashboard{}, err
	}
	published, err := s.Contracts.PublishedBetween(ctx, bounds[months-1], bounds[months])
	if err != nil {
		return Dashboard{}, err
	}
	suppliers, err := s.top(ctx, "supplier", s.MasterData.Suppliers)
	if err != nil {
		return Dashboard{}, err
	}
	projects, err := s.top(ctx, "project", s.MasterData.Projects)
	if err != nil {
		return Dashboard{}, err
	}
	periods, err := s.Contracts.CreatedIn(ctx, bounds)
	if err != nil {
		return Dashboard{}, err
	}

	d := Dashboard{ByPhase: make([]PhaseCount, len(contracts.Phases)), PublishedThisMonth: published}
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
	d.TopSuppliers = make([]TopSupplier, len(suppliers))
	for i, r := range suppliers {
		d.TopSuppliers[i] = TopSupplier{SupplierID: r.id, Top: r.Top}
	}
	d.TopProjects = make([]TopProject, len(projects))
	for i, r := range projects {
		d.TopProjects[i] = TopProject{ProjectID: r.id, Top: r.Top}
	}
	d.Monthly = make([]Month, months)
	for i := range d.Monthly {
		d.Monthly[i] = Month{Month: bounds[i].Format("2006-01")}
		if i < len(periods) {
			d.Monthly[i].Count, d.Monthly[i].TotalValue = periods[i].Count, periods[i].Value
		}
	}
	if s.Budgets != nil {
		if d.BudgetUtilisation, err = s.budgetUse(ctx); err != nil {
			return Dashboard{}, err
		}
	}
	return d, nil
}

// budgetUse reads utilisation per project and names the projects.
func (s *Service) budgetUse(ctx context.Context) (*[]BudgetUse, error) {
	rows, err := s.Budgets.ByProject(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ProjectID
	}
	refs, err := s.MasterData.Projects(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]BudgetUse, len(rows))
	for i, r := range rows {
		ref := refs[r.ProjectID] // a deleted project keeps its figures, without a code
		out[i] = BudgetUse{ProjectID: r.ProjectID, Code: ref.Code, Name: ref.Name, Planned: r.Planned, Committed: r.Committed, Reserved: r.Reserved}
	}
	return &out, nil
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

// ranked is a Top with the id of what it ranks.
type ranked struct {
	id string
	Top
}

// top ranks suppliers or projects in SQL and names the five winners.
func (s *Service) top(ctx context.Context, by string, resolve func(context.Context, []string) (map[string]masterdata.Ref, error)) ([]ranked, error) {
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
	out := make([]ranked, len(rows))
	for i, r := range rows {
		ref := refs[r.ID]
		out[i] = ranked{id: r.ID, Top: Top{Code: ref.Code, Name: ref.Name, ContractCount: r.Count, TotalValue: r.Value}}
	}
	return out, nil
}
