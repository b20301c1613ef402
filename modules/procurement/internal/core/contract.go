package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
)

// CreateContract drafts the contract of an approved evaluation through the
// contracts module, with the winner as supplier and its amount as value,
// and links both ways in one transaction: only in DaDuyet, only once (of
// concurrent requests exactly one creates it), by the creator or Admin. It
// returns the evaluation and the contract's id.
func (s *Service) CreateContract(ctx context.Context, p authn.Principal, id string, in ContractRequest) (Detail, string, error) {
	e, def, err := s.editable(ctx, p, id)
	if err != nil {
		return Detail{}, "", err
	}
	in.ContractType = strings.TrimSpace(in.ContractType)
	if err := httpx.Validate(in); err != nil {
		return Detail{}, "", err
	}
	if err := contractState(e); err != nil {
		return Detail{}, "", err
	}
	if e.SelectedQuotationID == nil {
		return Detail{}, "", apperr.Conflict("invalid_transition", "The evaluation has no winner to make a contract with.")
	}
	winner, err := s.quotationOf(ctx, e.ID, *e.SelectedQuotationID)
	if err != nil {
		return Detail{}, "", err
	}
	var contractID string
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		ok, err := s.store.claimContract(ctx, e.ID)
		if err != nil {
			return err
		}
		if !ok {
			now, err := s.load(ctx, e.ID)
			if err != nil {
				return err
			}
			return contractState(now)
		}
		title := fmt.Sprintf("%s (%s)", e.Title, e.MaPhieu)
		if r := []rune(title); len(r) > 300 {
			title = string(r[:300])
		}
		contractID, err = s.Contracts.CreateFromEvaluation(ctx, p, contracts.FromEvaluation{EvaluationID: e.ID, Title: title,
			ContractType: in.ContractType, SupplierID: winner.SupplierID, ProjectID: e.ProjectID, DepartmentID: e.DepartmentID,
			Value: winner.Amount, Currency: e.Currency, Description: "Drafted from purchase evaluation " + e.MaPhieu + "."})
		if err != nil {
			return err
		}
		return s.store.setContract(ctx, e.ID, contractID, p.UserID, s.now())
	})
	if err != nil {
		return Detail{}, "", err
	}
	d, err := s.reload(ctx, p, id, def)
	return d, contractID, err
}

// contractState refuses a contract for an evaluation that is not approved
// or already has one.
func contractState(e *Evaluation) error {
	switch {
	case e.ContractID != nil:
		return apperr.Conflict("invalid_transition", "Contract "+*e.ContractID+" was already created from this evaluation.")
	case e.Phase != DaDuyet:
		return apperr.Conflict("invalid_transition", "A contract is created from an approved ("+DaDuyet+") evaluation; this one is in "+e.Phase+".")
	}
	return nil
}
