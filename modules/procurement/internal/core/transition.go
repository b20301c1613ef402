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
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
)

// Kind is the evaluation kind with what the runtime needs of this service:
// loading an evaluation for the SLA job, the events and the preconditions.
func (s *Service) Kind() workflowdesigner.Kind {
	k := Kind()
	k.Preconditions = []workflowdesigner.Precondition{
		{Name: PreconditionReady, Code: "validation_failed", Check: s.readyToSubmit},
		{Name: PreconditionOpinions, Code: "opinions_missing", Check: s.opinionsComplete},
	}
	k.Load = func(ctx context.Context, id string) (workflowdesigner.Document, error) {
		e, err := s.load(ctx, id)
		if err != nil {
			return workflowdesigner.Document{}, err
		}
		return documentOf(e), nil
	}
	k.Transitioned = transitioned
	k.SLAWarning = func(d workflowdesigner.Document, inboxRoles []string) events.Event {
		e := d.Data.(*Evaluation)
		return SLAWarning{EvaluationID: e.ID, MaPhieu: e.MaPhieu, Title: e.Title, Phase: e.Phase,
			Deadline: e.SLADeadline.UTC(), InboxRoles: inboxRoles, CreatorID: e.CreatedBy}
	}
	return k
}

// transitioned is the evaluation's event for a move, published by the
// runtime inside the move's transaction.
func transitioned(m *workflowdesigner.Moved) events.Event {
	e := m.Doc.Data.(*Evaluation)
	return Transitioned{EvaluationID: e.ID, MaPhieu: e.MaPhieu, Title: e.Title, Policy: e.Policy, From: m.From, To: m.To,
		Decision: m.Decision, ActorID: m.ActorID, CreatorID: e.CreatedBy, InboxRoles: m.InboxRoles, At: m.At}
}

// MarkApproved is the kind's hook: entering DaDuyet records when, which the
// supplier's standing shows.
func (s *Service) MarkApproved(_ context.Context, m *workflowdesigner.Moved) error {
	if m.To == DaDuyet {
		m.Set("approved_at", m.At)
	}
	return nil
}

// held is the evaluation and its thread as the move's transaction holds
// them under the evaluation's row lock: quotation, winner and opinion
// writes take the same lock, so what a precondition reads holds until the
// move commits. Transition read both already; a move the runtime loaded
// itself (the SLA job's) reads them here. It returns nil when the
// evaluation left the phase meanwhile (the move's compare-and-set then
// refuses it).
func (s *Service) held(ctx context.Context, d workflowdesigner.Document) (*Evaluation, *thread, error) {
	if e := d.Data.(*Evaluation); e.held != nil {
		return e, e.held, nil
	}
	e, t, err := s.store.withThread(ctx, d.ID, d.Phase, true)
	if err != nil || e == nil {
		return nil, nil, err
	}
	return e, &t, nil
}

// readyToSubmit is the precondition of submitting: a winner among the
// quotations (with a reason unless it is the cheapest), at least
// procurement.minQuotations of the policy, and payment terms adding up to
// 100 when there are any. What is missing is a 400 naming the fields, for
// the creator to complete.
func (s *Service) readyToSubmit(ctx context.Context, d workflowdesigner.Document) (string, error) {
	e, t, err := s.held(ctx, d)
	if err != nil || e == nil {
		return "", err
	}
	quotes := t.quotations
	fields := apperr.Fields{}
	if n, least := len(quotes), s.Config.minQuotations(e.Policy); n < least {
		fields.Add("Quotations", fmt.Sprintf("Policy %s needs at least %d quotation(s) before submitting; there are %d.", e.Policy, least, n))
	}
	if err := checkWinner(quotes, e.SelectedQuotationID, e.SelectionReason, "SelectedQuotationId", "SelectionReason"); err != nil {
		ae, _ := apperr.As(err)
		for k, v := range ae.Fields {
			fields[k] = append(fields[k], v...)
		}
	}
	checkTerms(terms(e.PaymentTerms), fields)
	return "", fields.Err()
}

// opinionsComplete is the quorum of policy B's move out of
// ChoYKienPhongBan: every kind of procurement.requiredOpinions saved.
func (s *Service) opinionsComplete(ctx context.Context, d workflowdesigner.Document) (string, error) {
	e, t, err := s.held(ctx, d)
	if err != nil || e == nil {
		return "", err
	}
	var missing []string
	for _, k := range s.Config.RequiredOpinions {
		if !slices.ContainsFunc(t.opinions, func(o Opinion) bool { return o.Kind == k }) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return "The opinions of " + strings.Join(missing, ", ") + " are still missing.", nil
	}
	return "", nil
}

// Transition moves an evaluation for a user through the workflow runtime.
// One transaction reads the evaluation under its row lock (for the
// visibility rule, the move and its preconditions alike) and then its
// thread (for the preconditions and the detail answered), both in its first
// round trip on Postgres, where a read before the transaction, the
// precondition's locked read, its quotations and the detail's thread after
// the move were four. On SQLite the reads run on the writer's page cache,
// warm from the last move.
func (s *Service) Transition(ctx context.Context, p authn.Principal, id string, in TransitionRequest) (Detail, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Detail{}, notFound()
	}
	var (
		e   *Evaluation
		def *workflowdesigner.Definition
		m   *workflowdesigner.Moved
		t   thread
	)
	err := s.DB.InTx(ctx, func(ctx context.Context) error {
		var err error
		if e, t, err = s.store.withThread(ctx, id, "", true); err != nil {
			return err
		}
		if e == nil {
			return notFound()
		}
		if def, err = s.Workflows.CanSee(ctx, p, documentOf(e)); err != nil {
			return err
		}
		e.held = &t
		m, err = workflowdesigner.MoveFor(ctx, s.Workflows, KindName, documentOf(e), &p, in)
		return err
	})
	if err != nil {
		return Detail{}, err
	}
	// The row and its history as the move wrote them, without reading them back.
	t.history = append(t.history, m.Entry())
	e.Phase, e.SLADeadline, e.SLAWarningSent, e.HistoryHash = m.To, m.Deadline, false, m.Hash
	e.Version++
	e.UpdatedAt, e.UpdatedBy = m.At, m.ActorID
	if v, ok := m.Get("approved_at"); ok {
		at := v.(time.Time)
		e.ApprovedAt = &at
	}
	return s.present(ctx, p, e, def, t)
}

// SaveOpinion saves (or saves again) a department's opinion: by a holder of
// the kind's role or Admin, while the evaluation waits in ChoYKienPhongBan.
func (s *Service) SaveOpinion(ctx context.Context, p authn.Principal, id, kind string, in OpinionRequest) (Detail, error) {
	e, def, err := s.visible(ctx, p, id)
	if err != nil {
		return Detail{}, err
	}
	role, ok := OpinionRoles[kind]
	if !ok {
		return Detail{}, apperr.FieldError("Kind", "Must be one of: "+strings.Join(OpinionKinds, ", ")+".")
	}
	if !p.IsAdmin() && !p.HasRole(role) {
		return Detail{}, apperr.Forbidden("A " + kind + " opinion is given by " + role + ".")
	}
	in.Comment = strings.TrimSpace(in.Comment)
	if err := httpx.Validate(in); err != nil {
		return Detail{}, err
	}
	waiting := apperr.Conflict("not_editable", "Opinions are saved while the evaluation waits in "+ChoYKienPhongBan+".")
	if e.Phase != ChoYKienPhongBan {
		return Detail{}, waiting
	}
	now := s.now()
	o := &Opinion{ID: newID(), EvaluationID: e.ID, Kind: kind, Verdict: in.Verdict, Comment: in.Comment, UserID: p.UserID,
		CreatedAt: now, UpdatedAt: now}
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		ok, err := s.store.lock(ctx, e.ID, ChoYKienPhongBan)
		if err != nil {
			return err
		}
		if !ok {
			if _, err := s.load(ctx, e.ID); err != nil {
				return err
			}
			return waiting
		}
		if err := s.store.upsertOpinion(ctx, o); err != nil {
			return err
		}
		return s.Bus.Publish(ctx, OpinionSaved{EvaluationID: e.ID, MaPhieu: e.MaPhieu, Kind: kind, Verdict: in.Verdict,
			AuthorID: p.UserID, CreatorID: e.CreatedBy, At: now})
	})
	if err != nil {
		return Detail{}, err
	}
	return s.reload(ctx, p, id, def)
}
