package core

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/db"
)

// store is the only code that touches the workflow tables.
type store struct{ db *db.DB }

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

// load reads a whole definition: its row, steps with inbox roles and
// transitions with allowed roles, in five queries.
func (s *store) load(ctx context.Context, id string) (*engine.Definition, error) {
	var row definitionRow
	if err := s.conn(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, err
	}
	var steps []stepRow
	if err := s.conn(ctx).Where("definition_id = ?", id).Order("sort_order").Find(&steps).Error; err != nil {
		return nil, err
	}
	stepIDs := make([]string, len(steps))
	for i, st := range steps {
		stepIDs[i] = st.ID
	}
	var approvers []stepApproverRow
	if err := s.conn(ctx).Where("step_id IN ?", append(stepIDs, "")).Order("role").Find(&approvers).Error; err != nil {
		return nil, err
	}
	var moves []transitionRow
	if err := s.conn(ctx).Where("definition_id = ?", id).Order("sort_order").Find(&moves).Error; err != nil {
		return nil, err
	}
	moveIDs := make([]string, len(moves))
	for i, m := range moves {
		moveIDs[i] = m.ID
	}
	var roles []transitionRoleRow
	if err := s.conn(ctx).Where("transition_id IN ?", append(moveIDs, "")).Order("role").Find(&roles).Error; err != nil {
		return nil, err
	}

	inbox := map[string][]string{}
	for _, a := range approvers {
		inbox[a.StepID] = append(inbox[a.StepID], a.Role)
	}
	allowed := map[string][]string{}
	for _, r := range roles {
		allowed[r.TransitionID] = append(allowed[r.TransitionID], r.Role)
	}
	d := &engine.Definition{ID: row.ID, Version: row.Version, DocumentKind: row.DocumentKind,
		Published: row.Status == statusPublished,
		Spec:      engine.Spec{Key: row.DefKey, Name: row.Name, InitialPhase: row.InitialPhase}}
	for _, st := range steps {
		d.Steps = append(d.Steps, engine.Step{Phase: st.Phase, SLAHours: st.SLAHours, InboxRoles: inbox[st.ID], Terminal: st.IsTerminal,
			OnSLABreach: st.OnSLABreach})
	}
	for _, m := range moves {
		t := engine.Transition{From: m.FromPhase, To: m.ToPhase, Kind: engine.MoveKind(m.Kind), Roles: allowed[m.ID], Normal: m.IsNormal,
			Precondition: m.Precondition}
		if m.Guard != nil {
			t.Guard = *m.Guard
		}
		d.Transitions = append(d.Transitions, t)
	}
	return d, nil
}

// insert writes a definition with its steps and transitions.
func (s *store) insert(ctx context.Context, row definitionRow, spec engine.Spec) error {
	if err := s.conn(ctx).Create(&row).Error; err != nil {
		return err
	}
	for i, st := range spec.Steps {
		sr := stepRow{ID: uuid.Must(uuid.NewV7()).String(), DefinitionID: row.ID, Phase: st.Phase,
			SLAHours: st.SLAHours, IsTerminal: st.Terminal, OnSLABreach: st.Breach(), SortOrder: i}
		if err := s.conn(ctx).Create(&sr).Error; err != nil {
			return err
		}
		for _, r := range st.InboxRoles {
			if err := s.conn(ctx).Create(&stepApproverRow{StepID: sr.ID, Role: r}).Error; err != nil {
				return err
			}
		}
	}
	for i, t := range spec.Transitions {
		tr := transitionRow{ID: uuid.Must(uuid.NewV7()).String(), DefinitionID: row.ID, FromPhase: t.From, ToPhase: t.To,
			Kind: string(t.Kind), IsNormal: t.Normal, Precondition: t.Precondition, SortOrder: i}
		if t.Guard != "" {
			g := t.Guard
			tr.Guard = &g
		}
		if err := s.conn(ctx).Create(&tr).Error; err != nil {
			return err
		}
		for _, r := range t.Roles {
			if err := s.conn(ctx).Create(&transitionRoleRow{TransitionID: tr.ID, Role: r}).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *store) definitionByKey(ctx context.Context, key string) (*definitionRow, error) {
	var row definitionRow
	if err := s.conn(ctx).Where("def_key = ?", key).Order("version DESC").Take(&row).Error; err != nil {
		return nil, err
	}
	return &row, nil
}

func (s *store) publishedIDs(ctx context.Context, kind string) ([]string, error) {
	var ids []string
	err := s.conn(ctx).Model(&definitionRow{}).Where("document_kind = ? AND status = ?", kind, statusPublished).
		Order("id").Pluck("id", &ids).Error
	return ids, err
}

func (s *store) assignment(ctx context.Context, docType string) (string, error) {
	var a assignmentRow
	if err := s.conn(ctx).Where("document_type = ?", docType).Take(&a).Error; err != nil {
		return "", err
	}
	return a.DefinitionID, nil
}

func (s *store) assignIfMissing(ctx context.Context, a assignmentRow) error {
	var n int64
	if err := s.conn(ctx).Model(&assignmentRow{}).Where("document_type = ?", a.DocumentType).Count(&n).Error; err != nil || n > 0 {
		return err
	}
	return s.conn(ctx).Create(&a).Error
}
