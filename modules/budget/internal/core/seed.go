package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/search"
)

// demoProjects are the codes of the projects masterdata seeds with
// seed.demo; each gets one demo budget.
var demoProjects = []string{"DA001", "DA002", "DA003"}

// demoLines are the lines of every demo budget, in whole VND.
var demoLines = []struct {
	code, name, category string
	units                int64
}{
	{"VT", "Vật tư xây dựng", "Material", 12_000_000_000},
	{"TP", "Thầu phụ thi công", "Subcontract", 8_000_000_000},
	{"TB", "Thuê thiết bị", "Equipment", 2_500_000_000},
	{"DV", "Dịch vụ tư vấn và vệ sinh", "Service", 900_000_000},
}

// SeedDemo adds, for each demo project that exists, an Approved budget of
// the current fiscal year named NS-<project code>. A code any budget ever
// had (even a deleted one) is skipped, so it can run at every start.
func (s *Service) SeedDemo(ctx context.Context) error {
	year := s.now().In(s.Location).Year()
	for _, code := range demoProjects {
		projectID, err := s.projectByCode(ctx, code)
		if err != nil || projectID == "" {
			return err
		}
		if err := s.seedBudget(ctx, "NS-"+code, projectID, year); err != nil {
			return fmt.Errorf("demo budget for %s: %w", code, err)
		}
	}
	return nil
}

// projectByCode finds a live project by exact code through master data.
func (s *Service) projectByCode(ctx context.Context, code string) (string, error) {
	ids, err := s.MasterData.SearchProjectIDs(ctx, code, 20)
	if err != nil {
		return "", err
	}
	refs, err := s.MasterData.Projects(ctx, ids)
	if err != nil {
		return "", err
	}
	for id, r := range refs {
		if r.Code == code {
			return id, nil
		}
	}
	return "", nil
}

func (s *Service) seedBudget(ctx context.Context, code, projectID string, year int) error {
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		used, err := s.store.codeUsed(ctx, code)
		if err != nil || used {
			return err
		}
		now := s.now()
		name := fmt.Sprintf("Ngân sách dự án %s năm %d", code[len("NS-"):], year)
		b := &Budget{ID: uuid.Must(uuid.NewV7()).String(), Code: code, Name: name, ProjectID: &projectID, FiscalYear: year,
			Currency: "VND", Status: StatusApproved, OnExceed: ExceedWarn, SearchText: search.Text(code, name), Version: 1,
			ApprovedAt: &now, CreatedAt: now, UpdatedAt: now}
		if err := s.store.insert(ctx, b); err != nil {
			return err
		}
		ids := make([]string, len(demoLines))
		for i, d := range demoLines {
			category := d.category
			amount := money.FromUnits(d.units)
			l := &Line{ID: uuid.Must(uuid.NewV7()).String(), BudgetID: b.ID, Code: d.code, Name: d.name, Category: &category,
				OriginalAmount: amount, PlannedAmount: amount, Remaining: amount, Version: 1, CreatedAt: now, UpdatedAt: now}
			if err := s.store.insert(ctx, l); err != nil {
				return err
			}
			ids[i] = l.ID
		}
		return s.store.recompute(ctx, b.ID, ids...)
	})
}
