package core

import (
	"context"
	"fmt"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/sequence"
)

// Kind is the contract kind with what the runtime needs of this service:
// loading a contract for the SLA job, and the module's events.
func (s *Service) Kind() workflowdesigner.Kind {
	k := Kind()
	k.Load = func(ctx context.Context, id string) (workflowdesigner.Document, error) {
		c, err := s.load(ctx, id)
		if err != nil {
			return workflowdesigner.Document{}, err
		}
		return documentOf(c), nil
	}
	k.Transitioned = transitioned
	k.SLAWarning = func(d workflowdesigner.Document, inboxRoles []string) events.Event {
		c := d.Data.(*Contract)
		return SLAWarning{ContractID: c.ID, Title: c.Title, Phase: c.Phase, Deadline: c.SLADeadline.UTC(),
			InboxRoles: inboxRoles, DrafterID: c.DrafterID}
	}
	return k
}

// documentOf is what the workflow runtime sees of a contract.
func documentOf(c *Contract) workflowdesigner.Document {
	return workflowdesigner.Document{ID: c.ID, Phase: c.Phase, DefinitionID: c.WorkflowDefinitionID, OwnerID: c.DrafterID,
		Deadline: c.SLADeadline, Version: c.Version, HistoryHash: c.HistoryHash, Facts: factsOf(c), Data: c}
}

func factsOf(c *Contract) workflowdesigner.Facts {
	return workflowdesigner.Facts{FactBypass: c.BypassProcurementAndCCM}
}

// transitioned is the contract's event for a move, published by the
// runtime inside the move's transaction.
func transitioned(m *workflowdesigner.Moved) events.Event {
	c := m.Doc.Data.(*Contract)
	code := c.MaHopDong
	if v, ok := m.Get("ma_hop_dong"); ok {
		generated := v.(string)
		code = &generated
	}
	return Transitioned{ContractID: c.ID, Title: c.Title, From: m.From, To: m.To, Decision: m.Decision,
		ActorID: m.ActorID, DrafterID: c.DrafterID, InboxRoles: m.InboxRoles, Value: c.Value,
		BudgetLineID: c.BudgetLineID, MaHopDong: code, At: m.At}
}

// Transition moves a contract for a user through the workflow runtime and
// answers the detail from what the move wrote.
func (s *Service) Transition(ctx context.Context, p authn.Principal, id string, in TransitionRequest) (Detail, error) {
	// The contract and its thread are read (in the transaction's first
	// round trip on Postgres) and the contract moved in one transaction. On
	// SQLite both run on the writer, whose page cache then holds the row the
	// move updates, where a reader's cache starts cold after every commit.
	// The thread answered is the one read plus the move's approval: the
	// compare-and-set fails if another move came between.
	var (
		c   *Contract
		def *workflowdesigner.Definition
		m   *workflowdesigner.Moved
		th  thread
	)
	err := s.DB.InTx(ctx, func(ctx context.Context) error {
		var err error
		if c, th, def, err = s.visibleWithThread(ctx, p, id); err != nil {
			return err
		}
		m, err = workflowdesigner.MoveFor(ctx, s.Workflows, KindName, documentOf(c), &p, in)
		return err
	})
	if err != nil {
		return Detail{}, err
	}
	th.approvals = append(th.approvals, m.Entry())
	c.Phase, c.SLADeadline, c.SLAWarningSent, c.HistoryHash = m.To, m.Deadline, false, m.Hash
	c.Version++
	c.UpdatedAt, c.UpdatedBy = m.At, m.ActorID
	if v, ok := m.Get("ma_hop_dong"); ok {
		code := v.(string)
		c.MaHopDong = &code
	}
	d, err := s.present(ctx, p, c, def, th)
	d.Warnings = m.Warnings
	return d, err
}

// AssignCode is the contract kind's hook: entering DangDongDau without a
// code generates MaHopDong in the move's transaction, never twice.
func (s *Service) AssignCode(ctx context.Context, m *workflowdesigner.Moved) error {
	c := m.Doc.Data.(*Contract)
	if m.To != DangDongDau || c.MaHopDong != nil {
		return nil
	}
	code, err := s.newCode(ctx, c, m.At)
	if err != nil {
		return err
	}
	m.Set("ma_hop_dong", code)
	m.Set("search_text", searchText(c.Title, &code))
	return nil
}

// newCode generates MaHopDong: <projectCode>-<typeCode>-<seq> for
// project-bound types, <year>-<typeCode>-<seq> for framework types, with at
// least three digits of a per-prefix sequence.
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
	seq, err := sequence.Next(ctx, s.DB, "contract_code_sequences", prefix)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s-%03d", prefix, seq), nil
}
