package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/db"
)

// store is the only code that touches the workflow tables.
type store struct{ db *db.DB }

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

// load reads a whole definition: a draft from its row, a published one
// from its row, steps with inbox roles and transitions with allowed roles.
func (s *store) load(ctx context.Context, id string) (*engine.Definition, error) {
	row, err := s.row(ctx, id)
	if err != nil {
		return nil, err
	}
	spec, err := s.spec(ctx, row)
	if err != nil {
		return nil, err
	}
	return definitionOf(row, spec), nil
}

func definitionOf(row *definitionRow, spec engine.Spec) *engine.Definition {
	return &engine.Definition{ID: row.ID, Version: row.Version, DocumentKind: row.DocumentKind,
		Published: row.Status == statusPublished, Spec: spec}
}

func (s *store) row(ctx context.Context, id string) (*definitionRow, error) {
	var row definitionRow
	if err := s.conn(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, err
	}
	return &row, nil
}

// spec is the content of the definition whose row is row.
func (s *store) spec(ctx context.Context, row *definitionRow) (engine.Spec, error) {
	spec := engine.Spec{Key: row.DefKey, Name: row.Name, InitialPhase: row.InitialPhase}
	if row.Draft != nil {
		var c draftContent
		if err := json.Unmarshal([]byte(*row.Draft), &c); err != nil {
			return engine.Spec{}, fmt.Errorf("workflow definition %s: stored draft: %w", row.ID, err)
		}
		spec.InitialPhase, spec.Steps, spec.Transitions = c.InitialPhase, c.Steps, c.Transitions
		return spec, nil
	}
	steps, moves, err := s.contentRows(ctx, row.ID)
	if err != nil {
		return engine.Spec{}, err
	}
	spec.Steps, spec.Transitions = steps, moves
	return spec, nil
}

// contentRows reads the steps with inbox roles and the transitions with
// allowed roles of a published definition, in four queries.
func (s *store) contentRows(ctx context.Context, id string) ([]engine.Step, []engine.Transition, error) {
	var steps []stepRow
	if err := s.conn(ctx).Where("definition_id = ?", id).Order("sort_order").Find(&steps).Error; err != nil {
		return nil, nil, err
	}
	stepIDs := make([]string, len(steps))
	for i, st := range steps {
		stepIDs[i] = st.ID
	}
	var approvers []stepApproverRow
	if err := s.conn(ctx).Where("step_id IN ?", append(stepIDs, "")).Order("role").Find(&approvers).Error; err != nil {
		return nil, nil, err
	}
	var moves []transitionRow
	if err := s.conn(ctx).Where("definition_id = ?", id).Order("sort_order").Find(&moves).Error; err != nil {
		return nil, nil, err
	}
	moveIDs := make([]string, len(moves))
	for i, m := range moves {
		moveIDs[i] = m.ID
	}
	var roles []transitionRoleRow
	if err := s.conn(ctx).Where("transition_id IN ?", append(moveIDs, "")).Order("role").Find(&roles).Error; err != nil {
		return nil, nil, err
	}

	inbox := map[string][]string{}
	for _, a := range approvers {
		inbox[a.StepID] = append(inbox[a.StepID], a.Role)
	}
	allowed := map[string][]string{}
	for _, r := range roles {
		allowed[r.TransitionID] = append(allowed[r.TransitionID], r.Role)
	}
	var outSteps []engine.Step
	for _, st := range steps {
		outSteps = append(outSteps, engine.Step{Phase: st.Phase, SLAHours: st.SLAHours, InboxRoles: inbox[st.ID], Terminal: st.IsTerminal,
			OnSLABreach: st.OnSLABreach})
	}
	var outMoves []engine.Transition
	for _, m := range moves {
		t := engine.Transition{From: m.FromPhase, To: m.ToPhase, Kind: engine.MoveKind(m.Kind), Roles: allowed[m.ID], Normal: m.IsNormal,
			Precondition: m.Precondition}
		if m.Guard != nil {
			t.Guard = *m.Guard
		}
		outMoves = append(outMoves, t)
	}
	return outSteps, outMoves, nil
}

// insert writes a published definition with its steps and transitions.
func (s *store) insert(ctx context.Context, row definitionRow, spec engine.Spec) error {
	if err := s.conn(ctx).Create(&row).Error; err != nil {
		return err
	}
	return s.insertContent(ctx, row.ID, spec)
}

// insertContent writes the steps and transitions of a definition that is
// being published. A role listed twice for one step or move is one role.
func (s *store) insertContent(ctx context.Context, definitionID string, spec engine.Spec) error {
	for i, st := range spec.Steps {
		sr := stepRow{ID: uuid.Must(uuid.NewV7()).String(), DefinitionID: definitionID, Phase: st.Phase,
			SLAHours: st.SLAHours, IsTerminal: st.Terminal, OnSLABreach: st.Breach(), SortOrder: i}
		if err := s.conn(ctx).Create(&sr).Error; err != nil {
			return err
		}
		for _, r := range distinct(st.InboxRoles) {
			if err := s.conn(ctx).Create(&stepApproverRow{StepID: sr.ID, Role: r}).Error; err != nil {
				return err
			}
		}
	}
	for i, t := range spec.Transitions {
		tr := transitionRow{ID: uuid.Must(uuid.NewV7()).String(), DefinitionID: definitionID, FromPhase: t.From, ToPhase: t.To,
			Kind: string(t.Kind), IsNormal: t.Normal, Precondition: t.Precondition, SortOrder: i}
		if t.Guard != "" {
			g := t.Guard
			tr.Guard = &g
		}
		if err := s.conn(ctx).Create(&tr).Error; err != nil {
			return err
		}
		for _, r := range distinct(t.Roles) {
			if err := s.conn(ctx).Create(&transitionRoleRow{TransitionID: tr.ID, Role: r}).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

func distinct(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func (s *store) definitionByKey(ctx context.Context, key string) (*definitionRow, error) {
	var row definitionRow
	if err := s.conn(ctx).Where("def_key = ?", key).Order("version DESC").Take(&row).Error; err != nil {
		return nil, err
	}
	return &row, nil
}

// list returns the definition rows of kind (of every kind when kind is
// empty), by key and version.
func (s *store) list(ctx context.Context, kind string) ([]definitionRow, error) {
	q := s.conn(ctx).Model(&definitionRow{})
	if kind != "" {
		q = q.Where("document_kind = ?", kind)
	}
	var rows []definitionRow
	err := q.Order("def_key, version").Find(&rows).Error
	return rows, err
}

// rows returns the definition rows with these ids, by id.
func (s *store) rows(ctx context.Context, ids []string) (map[string]definitionRow, error) {
	var rows []definitionRow
	if err := s.conn(ctx).Where("id IN ?", append(ids, "")).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]definitionRow, len(rows))
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}

// insertRow writes a draft's row; its content is in row.Draft.
func (s *store) insertRow(ctx context.Context, row definitionRow) error {
	return s.conn(ctx).Create(&row).Error
}

// updateDraft replaces a draft's name and content, if it is still a draft.
func (s *store) updateDraft(ctx context.Context, id, name, content string, now time.Time, by *string) (bool, error) {
	res := s.conn(ctx).Model(&definitionRow{}).Where("id = ? AND status = ?", id, statusDraft).Updates(map[string]any{
		"name": name, "draft": content, "updated_at": now, "updated_by": by, "revision": gorm.Expr("revision + 1")})
	return res.RowsAffected == 1, res.Error
}

// publish turns the draft at revision into a published definition: the
// row first, by compare-and-set on its status and revision, then its steps
// and transitions. It reports false, writing nothing, when the row is no
// longer that draft.
func (s *store) publish(ctx context.Context, id string, revision int, spec engine.Spec, now time.Time, by *string) (bool, error) {
	res := s.conn(ctx).Model(&definitionRow{}).Where("id = ? AND status = ? AND revision = ?", id, statusDraft, revision).
		Updates(map[string]any{"status": statusPublished, "draft": nil, "initial_phase": spec.InitialPhase, "published_at": now,
			"updated_at": now, "updated_by": by, "revision": gorm.Expr("revision + 1")})
	if res.Error != nil || res.RowsAffected != 1 {
		return false, res.Error
	}
	return true, s.insertContent(ctx, id, spec)
}

// deleteDraft removes a definition if it is still a draft.
func (s *store) deleteDraft(ctx context.Context, id string) (bool, error) {
	res := s.conn(ctx).Where("id = ? AND status = ?", id, statusDraft).Delete(&definitionRow{})
	return res.RowsAffected == 1, res.Error
}

// highestVersion is the highest version of key and the kind of its
// definitions; 0 and "" for a new key.
func (s *store) highestVersion(ctx context.Context, key string) (int, string, error) {
	row, err := s.definitionByKey(ctx, key)
	if db.IsNotFound(err) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	return row.Version, row.DocumentKind, nil
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

// assignments returns every assignment, by document type.
func (s *store) assignments(ctx context.Context) (map[string]assignmentRow, error) {
	var rows []assignmentRow
	if err := s.conn(ctx).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]assignmentRow, len(rows))
	for _, a := range rows {
		out[a.DocumentType] = a
	}
	return out, nil
}

func (s *store) assignIfMissing(ctx context.Context, a assignmentRow) error {
	var n int64
	if err := s.conn(ctx).Model(&assignmentRow{}).Where("document_type = ?", a.DocumentType).Count(&n).Error; err != nil || n > 0 {
		return err
	}
	return s.conn(ctx).Create(&a).Error
}

// assign sets a document type's assignment, replacing any.
func (s *store) assign(ctx context.Context, a assignmentRow) error {
	return s.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "document_type"}},
		DoUpdates: clause.AssignmentColumns([]string{"definition_id", "updated_at", "updated_by"}),
	}).Create(&a).Error
}
