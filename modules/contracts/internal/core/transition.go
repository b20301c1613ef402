package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
)

// Transition moves a contract for a user: the pair must be a move of the
// pinned definition (409 invalid_transition, Admin too), the caller must
// hold one of its roles (403 transition_forbidden; Admin passes), and
// returns and rejections need a comment.
func (s *Service) Transition(ctx context.Context, p authn.Principal, id string, in TransitionRequest) (Detail, error) {
	c, def, err := s.visible(ctx, p, id)
	if err != nil {
		return Detail{}, err
	}
	in.Comment = strings.TrimSpace(in.Comment)
	if err := httpx.Validate(in); err != nil {
		return Detail{}, err
	}
	if !slices.Contains(Phases, in.ToPhase) {
		return Detail{}, apperr.FieldError("ToPhase", "Must be one of: "+strings.Join(Phases, ", ")+".")
	}
	t, err := def.Move(c.Phase, in.ToPhase, actorOf(p), factsOf(c))
	if err != nil {
		return Detail{}, err
	}
	if t.RequiresComment() && in.Comment == "" {
		return Detail{}, apperr.FieldError("Comment", "A "+string(t.Kind)+" needs a comment saying why.")
	}
	if in.Version != nil && *in.Version != c.Version {
		return Detail{}, staleVersion()
	}
	if err := s.move(ctx, c, def, t, &p.UserID, t.Decision(false), in.Comment); err != nil {
		return Detail{}, err
	}
	moved, err := s.load(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	return s.detail(ctx, p, moved, def)
}

// move applies t in one transaction: compare-and-set on the current phase,
// the new deadline, the contract code when entering DangDongDau, one
// approval row, and the Transitioned event whose in-transaction subscribers
// may still refuse the move.
func (s *Service) move(ctx context.Context, c *Contract, def *workflowdesigner.Definition, t workflowdesigner.Transition,
	actorID *string, decision, comment string) error {
	now := s.now()
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		cols := map[string]any{"phase": t.To, "sla_warning_sent": false, "updated_at": now, "updated_by": actorID, "sla_deadline": nil}
		if sla := def.SLA(t.To); sla > 0 {
			cols["sla_deadline"] = now.Add(sla)
		}
		code := c.MaHopDong
		if t.To == DangDongDau && code == nil {
			generated, err := s.newCode(ctx, c, now)
			if err != nil {
				return err
			}
			code = &generated
			cols["ma_hop_dong"] = generated
			cols["search_text"] = searchText(c.Title, code)
		}
		ok, err := s.store.move(ctx, c.ID, c.Phase, cols)
		if err != nil {
			return err
		}
		if !ok {
			return apperr.Conflict("invalid_transition", fmt.Sprintf("The contract is no longer in %s; reload it.", c.Phase))
		}
		err = s.store.insert(ctx, &Approval{ID: uuid.Must(uuid.NewV7()).String(), ContractID: c.ID, FromPhase: c.Phase,
			ToPhase: t.To, ApproverUserID: actorID, Decision: decision, Comment: comment, ApprovedAt: now})
		if err != nil {
			return err
		}
		return s.Bus.Publish(ctx, Transitioned{ContractID: c.ID, Title: c.Title, From: c.Phase, To: t.To, Decision: decision,
			ActorID: actorID, DrafterID: c.DrafterID, InboxRoles: def.InboxRoles(t.To), Value: c.Value,
			BudgetLineID: c.BudgetLineID, MaHopDong: code, At: now})
	})
}

// newCode generates MaHopDong: <projectCode>-<typeCode>-<seq> for
// project-bound types, <year>-<typeCode>-<seq> for framework types, with at
// least three digits of a per-prefix sequence incremented atomically in the
// move's transaction.
func (s *Service) newCode(ctx context.Context, c *Contract, now time.Time) (string, error) {
	typeCode := typeCodes[c.ContractType]
	var head string
	switch {
	case isFramework(c.ContractType):
		head = fmt.Sprint(now.In(s.Location).Year())
	case c.ProjectID != nil:
		p, err := s.MasterData.Project(ctx, *c.ProjectID)
		if err != nil {
			return "", fmt.Errorf("project of contract %s: %w", c.ID, err)
		}
		head = p.Code
	default:
		return "", apperr.Conflict("invalid_transition", "The contract needs a project before it can be sealed.")
	}
	prefix := head + "-" + typeCode
	seq, err := s.store.nextSeq(ctx, prefix)
	if err != nil {
		return "", fmt.Errorf("next code of %s: %w", prefix, err)
	}
	return fmt.Sprintf("%s-%03d", prefix, seq), nil
}
