package core

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
)

// checkSupplier refuses a quotation of an unknown or inactive supplier, or
// of one another quotation of the evaluation already names (400 on
// SupplierId). It runs in the write's transaction, after the evaluation's
// row lock.
func (s *Service) checkSupplier(ctx context.Context, evaluationID, supplierID, except string) error {
	r, err := s.MasterData.Supplier(ctx, supplierID)
	switch {
	case apperr.KindOf(err) == apperr.KindNotFound:
		return apperr.FieldError("SupplierId", "No such supplier.")
	case err != nil:
		return err
	case !r.IsActive:
		return apperr.FieldError("SupplierId", "The supplier is inactive and cannot be quoted.")
	}
	quotes, err := s.store.quotations(ctx, evaluationID)
	if err != nil {
		return err
	}
	for _, q := range quotes {
		if q.SupplierID == supplierID && q.ID != except {
			return duplicateSupplier()
		}
	}
	if except == "" && len(quotes) >= maxQuotations {
		return apperr.FieldError("Quotations", "An evaluation holds at most 50 quotations.")
	}
	return nil
}

func duplicateSupplier() *apperr.Error {
	return apperr.FieldError("SupplierId", "Another quotation of this evaluation already names this supplier; change that one instead.")
}

// draft loads a draft the caller may change and checks the body, in the
// order of checks: 404, 403, 400, then 409 while it is no longer a draft.
func (s *Service) draft(ctx context.Context, p authn.Principal, id string, body any) (*Evaluation, *workflowdesigner.Definition, error) {
	e, def, err := s.editable(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	if err := httpx.Validate(body); err != nil {
		return nil, nil, err
	}
	if e.Phase != def.InitialPhase {
		return nil, nil, notEditable(def.InitialPhase)
	}
	return e, def, nil
}

// AddQuotation adds a supplier's offer to a draft.
func (s *Service) AddQuotation(ctx context.Context, p authn.Principal, id string, in QuotationRequest) (Detail, error) {
	in.Notes = strings.TrimSpace(in.Notes)
	e, def, err := s.draft(ctx, p, id, in)
	if err != nil {
		return Detail{}, err
	}
	now := s.now()
	q := &Quotation{ID: uuid.Must(uuid.NewV7()).String(), EvaluationID: e.ID, SupplierID: in.SupplierID, Amount: in.Amount,
		DeliveryDays: in.DeliveryDays, WarrantyMonths: in.WarrantyMonths, Notes: in.Notes,
		CreatedAt: now, CreatedBy: p.UserID, UpdatedAt: now, UpdatedBy: p.UserID}
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		if err := s.write(ctx, e, def, nil, map[string]any{"updated_at": now, "updated_by": p.UserID}); err != nil {
			return err
		}
		if err := s.checkSupplier(ctx, e.ID, in.SupplierID, ""); err != nil {
			return err
		}
		if err := s.store.insert(ctx, q); db.IsUniqueViolation(err) {
			return duplicateSupplier()
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return Detail{}, err
	}
	return s.reload(ctx, p, id, def)
}

// quotationOf loads a quotation of the evaluation (404 otherwise).
func (s *Service) quotationOf(ctx context.Context, evaluationID, id string) (*Quotation, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, apperr.NotFound("Quotation")
	}
	q, err := s.store.quotation(ctx, evaluationID, id)
	if db.IsNotFound(err) {
		return nil, apperr.NotFound("Quotation")
	}
	return q, err
}

// UpdateQuotation replaces a quotation of a draft.
func (s *Service) UpdateQuotation(ctx context.Context, p authn.Principal, id, quotationID string, in QuotationRequest) (Detail, error) {
	e, def, err := s.editable(ctx, p, id)
	if err != nil {
		return Detail{}, err
	}
	q, err := s.quotationOf(ctx, e.ID, quotationID)
	if err != nil {
		return Detail{}, err
	}
	in.Notes = strings.TrimSpace(in.Notes)
	if err := httpx.Validate(in); err != nil {
		return Detail{}, err
	}
	if e.Phase != def.InitialPhase {
		return Detail{}, notEditable(def.InitialPhase)
	}
	now := s.now()
	q.SupplierID, q.Amount, q.DeliveryDays, q.WarrantyMonths, q.Notes = in.SupplierID, in.Amount, in.DeliveryDays, in.WarrantyMonths, in.Notes
	q.UpdatedAt, q.UpdatedBy = now, p.UserID
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		if err := s.write(ctx, e, def, nil, map[string]any{"updated_at": now, "updated_by": p.UserID}); err != nil {
			return err
		}
		if _, err := s.quotationOf(ctx, e.ID, q.ID); err != nil {
			return err // deleted meanwhile
		}
		if err := s.checkSupplier(ctx, e.ID, in.SupplierID, q.ID); err != nil {
			return err
		}
		if err := s.store.updateQuotation(ctx, q); db.IsUniqueViolation(err) {
			return duplicateSupplier()
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return Detail{}, err
	}
	return s.reload(ctx, p, id, def)
}

// DeleteQuotation removes a quotation of a draft; removing the chosen one
// clears the choice.
func (s *Service) DeleteQuotation(ctx context.Context, p authn.Principal, id, quotationID string) error {
	e, def, err := s.editable(ctx, p, id)
	if err != nil {
		return err
	}
	q, err := s.quotationOf(ctx, e.ID, quotationID)
	if err != nil {
		return err
	}
	if e.Phase != def.InitialPhase {
		return notEditable(def.InitialPhase)
	}
	now := s.now()
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		cols := map[string]any{"updated_at": now, "updated_by": p.UserID}
		if e.SelectedQuotationID != nil && *e.SelectedQuotationID == q.ID {
			cols["selected_quotation_id"], cols["selection_reason"] = nil, ""
		}
		if err := s.write(ctx, e, def, nil, cols); err != nil {
			return err
		}
		// The choice may have changed since it was read: clear it if it
		// still names the quotation going away.
		if err := s.store.conn(ctx).Exec(`UPDATE purchase_evaluations SET selected_quotation_id = NULL, selection_reason = ''
			WHERE id = ? AND selected_quotation_id = ?`, e.ID, q.ID).Error; err != nil {
			return err
		}
		return s.store.deleteQuotation(ctx, q.ID)
	})
}

// SelectWinner chooses the quotation that wins; one that is not the
// cheapest needs a reason.
func (s *Service) SelectWinner(ctx context.Context, p authn.Principal, id string, in WinnerRequest) (Detail, error) {
	in.Reason = strings.TrimSpace(in.Reason)
	e, def, err := s.draft(ctx, p, id, in)
	if err != nil {
		return Detail{}, err
	}
	now := s.now()
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		cols := map[string]any{"selected_quotation_id": in.QuotationID, "selection_reason": in.Reason, "updated_at": now, "updated_by": p.UserID}
		if err := s.write(ctx, e, def, nil, cols); err != nil {
			return err
		}
		// Checked after the row lock: the quotations cannot change until commit.
		quotes, err := s.store.quotations(ctx, e.ID)
		if err != nil {
			return err
		}
		return checkWinner(quotes, &in.QuotationID, in.Reason, "QuotationId", "Reason")
	})
	if err != nil {
		return Detail{}, err
	}
	return s.reload(ctx, p, id, def)
}

// checkWinner refuses a winner that is not a quotation of the evaluation,
// or one that is not the cheapest without a reason.
func checkWinner(quotes []Quotation, winner *string, reason, winnerField, reasonField string) error {
	if winner == nil {
		return apperr.FieldError(winnerField, "Choose the winning quotation first.")
	}
	for _, q := range quotes {
		if q.ID != *winner {
			continue
		}
		if q.Amount > quotes[0].Amount && strings.TrimSpace(reason) == "" {
			return apperr.FieldError(reasonField, "The chosen quotation is not the cheapest; say why it wins.")
		}
		return nil
	}
	return apperr.FieldError(winnerField, "Not a quotation of this evaluation.")
}
