package core

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/search"
)

// The bulk demo budgets (contractflow seed --demo-size): the projects with
// the most contracts waiting in CostControl's check get an Approved budget
// each (Warn and Block alternately), until half of those contracts are
// covered, with about one line per 40 of them; the contracts module names
// the lines on them. Each line plans twice its contracts' values and a
// billion VND more, so no move into signature is refused or overdraws. No
// reservation is open yet: the move into DangTrinhKy makes it.

var (
	demoBudgetColumns = []string{"id", "code", "name", "project_id", "fiscal_year", "currency", "status", "on_exceed", "description",
		"planned_total", "adjustments_total", "reserved_total", "committed_total", "actual_total", "remaining", "approved_at", "approved_by",
		"search_text", "version", "created_at", "created_by", "updated_at", "updated_by"}
	demoLineColumns = []string{"id", "budget_id", "code", "name", "category", "original_amount", "adjustments_total", "planned_amount",
		"reserved_amount", "committed_amount", "actual_amount", "remaining", "version", "created_at", "created_by", "updated_at", "updated_by"}
	demoLineCategories = []string{"Material", "Subcontract", "Service", "Equipment"}
)

// SeedDemoSet adds the demo budgets unless the first is there already.
func (s *Service) SeedDemoSet(ctx context.Context, set *kernel.DemoSet) error {
	r := set.Rand(4)
	seq := 0
	id := func() string { seq++; return kernel.NewID(r, seq-1) }
	var have int64
	if err := s.DB.Conn(ctx).Table("budgets").Where("id = ?", kernel.NewID(set.Rand(4), 0)).Count(&have).Error; err != nil || have > 0 {
		return err
	}
	if len(set.AwaitingBudget) == 0 || set.NameBudgetLines == nil {
		return nil
	}
	codes := map[string]string{}
	for _, p := range set.Projects {
		codes[p.ID] = p.Code
	}
	byProject := map[string][]kernel.DemoContract{}
	for _, c := range set.AwaitingBudget {
		if codes[c.ProjectID] != "" {
			byProject[c.ProjectID] = append(byProject[c.ProjectID], c)
		}
	}
	projects := make([]string, 0, len(byProject))
	for pid := range byProject {
		projects = append(projects, pid)
	}
	slices.SortFunc(projects, func(a, b string) int {
		return cmp.Or(len(byProject[b])-len(byProject[a]), cmp.Compare(codes[a], codes[b]))
	})
	year := set.Now.In(s.Location).Year()
	approver := set.UsersByRole["CostControl"][0]
	now := set.Now
	var bRows, lRows [][]any
	named := map[string]string{}
	taken := 0
	for i, pid := range projects {
		if taken >= len(set.AwaitingBudget)/2 {
			break
		}
		ws := byProject[pid]
		taken += len(ws)
		budgetID := id()
		nLines := max(1, (len(ws)+20)/40)
		lineIDs := make([]string, nLines)
		planned := make([]int64, nLines)
		for k := range nLines {
			lineIDs[k] = id()
		}
		for k, w := range ws {
			planned[k%nLines] += 2 * w.Value
			named[w.ID] = lineIDs[k%nLines]
		}
		var sum int64
		for k := range nLines {
			planned[k] += 1_000_000_000 * 100
			sum += planned[k]
			lRows = append(lRows, []any{lineIDs[k], budgetID, fmt.Sprintf("L%02d", k+1),
				fmt.Sprintf("Hạng mục %s %d", kernel.DemoWorkItems[k%len(kernel.DemoWorkItems)], k+1),
				demoLineCategories[k%len(demoLineCategories)], planned[k], 0, planned[k], 0, 0, 0, planned[k], 1, now, approver, now, approver})
		}
		onExceed := "Warn"
		if i%2 == 1 {
			onExceed = "Block"
		}
		code := fmt.Sprintf("NS-%s-%d", codes[pid], year) // NS-<project> is seed.demo's
		name := fmt.Sprintf("Ngân sách dự án %s năm %d", codes[pid], year)
		bRows = append(bRows, []any{budgetID, code, name, pid, year, "VND", "Approved", onExceed, "",
			sum, 0, 0, 0, 0, sum, now, approver, search.Text(code, name), 2, now, approver, now, approver})
	}
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		if err := s.DB.InsertRows(ctx, "budgets", demoBudgetColumns, bRows); err != nil {
			return err
		}
		if err := s.DB.InsertRows(ctx, "budget_lines", demoLineColumns, lRows); err != nil {
			return err
		}
		return set.NameBudgetLines(ctx, named)
	})
}
