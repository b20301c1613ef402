package contracts_test

import (
	"context"
	"errors"
	"testing"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/money"
)

// Drafts creates a contract as POST /api/contracts does, inside the
// caller's transaction: it commits with the caller's writes, is undone
// with them, and refuses what the endpoint refuses.
func TestDraftsFromEvaluation(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		app := e.app.Kernel.App()
		drafts, ok := kernel.Lookup[contracts.Drafts](app)
		if !ok {
			t.Fatal("contracts provide no Drafts")
		}
		u := e.user(t, "Procurement")
		p := authn.Principal{UserID: u.id, Name: u.name, Roles: []string{"Procurement"}}
		in := contracts.FromEvaluation{EvaluationID: "0190a5c4-0000-7000-8000-000000000001", Title: "Cung cấp thép từ PE/2026/A/001",
			ContractType: "Supply", SupplierID: e.supplier, ProjectID: e.project, Value: money.FromUnits(120_000_000), Currency: "VND"}
		ctx := context.Background()

		var id string
		err := app.DB.InTx(ctx, func(ctx context.Context) error {
			var err error
			id, err = drafts.CreateFromEvaluation(ctx, p, in)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		c := e.get(t, e.admin, id)
		if c.Phase != DangSoanThao || c.DrafterID != u.id || c.SupplierID != e.supplier || c.Value.String() != "120000000" ||
			c.ContractType != "Supply" || c.ProjectID == nil || *c.ProjectID != e.project {
			t.Errorf("contract %+v", c)
		}
		var detail struct{ PurchaseEvaluationID *string }
		e.do("GET", "/api/contracts/"+id, e.admin, nil).JSON(t, &detail)
		if detail.PurchaseEvaluationID == nil || *detail.PurchaseEvaluationID != in.EvaluationID {
			t.Errorf("purchaseEvaluationId %v", detail.PurchaseEvaluationID)
		}

		before := e.count(t, "SELECT COUNT(*) FROM contracts")
		undo := errors.New("the caller's own write failed")
		err = app.DB.InTx(ctx, func(ctx context.Context) error {
			if _, err := drafts.CreateFromEvaluation(ctx, p, in); err != nil {
				return err
			}
			return undo
		})
		if !errors.Is(err, undo) || e.count(t, "SELECT COUNT(*) FROM contracts") != before {
			t.Errorf("rolled back: %v, %d contracts (was %d)", err, e.count(t, "SELECT COUNT(*) FROM contracts"), before)
		}

		bad := in
		bad.ContractType = "Barter"
		if _, err := drafts.CreateFromEvaluation(ctx, p, bad); apperr.CodeOf(err) != "validation_failed" {
			t.Errorf("unknown contract type: %v", err)
		} else if ae, _ := apperr.As(err); len(ae.Fields["ContractType"]) == 0 {
			t.Errorf("unknown contract type names %v", ae.Fields)
		}
		if e.count(t, "SELECT COUNT(*) FROM contracts") != before {
			t.Error("a refused draft was written")
		}
	})
}
