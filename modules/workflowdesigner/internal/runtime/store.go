package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/contractflow/contractflow/platform/db"
)

// store is the SQL of the runtime over the workflow columns a kind lends it
// (Tables). Table and column names come from registrations, never from
// requests.
type store struct{ db *db.DB }

// exec runs a write below GORM on the transaction in ctx: a move's two
// statements are small enough that the ORM's work per statement (building
// it from a map, callbacks) was a good part of their cost. Placeholders are
// $1…$n, numbered in order of first use, which both engines read so.
func (s store) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.db.Conn(ctx).Statement.ConnPool.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// move is the compare-and-set of a transition and its history row: it
// succeeds only while the document is still in its phase at the history
// head it was read with, so of two concurrent moves exactly one wins (and
// writes its row). Columns set by hooks are written by the same statement,
// in name order.
func (s store) move(ctx context.Context, t Tables, m *Moved) (bool, error) {
	var q strings.Builder
	q.WriteString(`UPDATE ` + t.Documents + ` SET phase = $1, sla_deadline = $2, sla_warning_sent = $3, sla_reminded_at = NULL,
		history_hash = $4, updated_at = $5, updated_by = $6, version = version + 1`)
	args := []any{m.To, m.Deadline, false, m.Hash, m.At, m.ActorID}
	for _, c := range slices.Sorted(maps.Keys(m.set)) {
		args = append(args, m.set[c])
		fmt.Fprintf(&q, ", %s = $%d", c, len(args))
	}
	n := len(args)
	fmt.Fprintf(&q, ` WHERE id = $%d AND phase = $%d AND history_hash = $%d AND deleted_at IS NULL`, n+1, n+2, n+3)
	args = append(args, m.Doc.ID, m.From, m.Doc.HistoryHash)
	if s.db.Dialect() == db.Postgres {
		// One round trip instead of two: the history row is inserted only
		// when the compare-and-set updated the document, by the same
		// statement (it reuses the update's typed parameters).
		q.WriteString(` RETURNING id) INSERT INTO ` + t.History + ` (id, ` + t.Key + `, from_phase, to_phase, approver_user_id, decision,
			comment, approved_at, hash, prev_hash)`)
		fmt.Fprintf(&q, ` SELECT CAST($%d AS VARCHAR(36)), moved.id, $%d, $1, $6, CAST($%d AS VARCHAR(16)), CAST($%d AS TEXT), $5, $4, $%d FROM moved`,
			n+4, n+2, n+5, n+6, n+3)
		args = append(args, m.HistoryID, m.Decision, m.Comment)
		changed, err := s.exec(ctx, `WITH moved AS (`+q.String(), args...)
		return changed == 1, err
	}
	changed, err := s.exec(ctx, q.String(), args...)
	if err != nil || changed != 1 {
		return false, err
	}
	return true, s.appendHistory(ctx, t, m)
}

// appendHistory inserts the move's history row.
func (s store) appendHistory(ctx context.Context, t Tables, m *Moved) error {
	_, err := s.exec(ctx, `INSERT INTO `+t.History+` (id, `+t.Key+`, from_phase, to_phase, approver_user_id, decision, comment, approved_at, hash, prev_hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		m.HistoryID, m.Doc.ID, m.From, m.To, m.ActorID, m.Decision, m.Comment, m.At, m.Hash, m.Doc.HistoryHash)
	return err
}

type dueRow struct {
	ID          string
	SLADeadline time.Time `gorm:"column:sla_deadline"`
}

// overdue lists live documents whose deadline passed, oldest first, after
// the keyset cursor (deadline, id) of the previous page; the partial index
// on sla_deadline of each documents table serves it.
func (s store) overdue(ctx context.Context, t Tables, now, afterDeadline time.Time, afterID string, limit int) ([]dueRow, error) {
	var rows []dueRow
	err := s.db.Conn(ctx).Table(t.Documents).Select("id, sla_deadline").
		Where("deleted_at IS NULL AND sla_deadline IS NOT NULL AND sla_deadline < ?", now).
		Where("(sla_deadline > ? OR (sla_deadline = ? AND id > ?))", afterDeadline, afterDeadline, afterID).
		Order("sla_deadline, id").Limit(limit).Scan(&rows).Error
	return rows, err
}

// dueSoon lists live documents within the warning window not yet warned.
func (s store) dueSoon(ctx context.Context, t Tables, now, until time.Time, limit int) ([]dueRow, error) {
	var rows []dueRow
	err := s.db.Conn(ctx).Table(t.Documents).Select("id, sla_deadline").
		Where("deleted_at IS NULL AND sla_deadline IS NOT NULL AND sla_deadline >= ? AND sla_deadline < ? AND sla_warning_sent = ?", now, until, false).
		Order("sla_deadline, id").Limit(limit).Scan(&rows).Error
	return rows, err
}

// markWarned sets the warning flag unless another node already did or the
// document moved on.
func (s store) markWarned(ctx context.Context, t Tables, id string, deadline time.Time) (bool, error) {
	res := s.db.Conn(ctx).Table(t.Documents).
		Where("id = ? AND sla_warning_sent = ? AND sla_deadline = ?", id, false, deadline).
		Update("sla_warning_sent", true)
	return res.RowsAffected == 1, res.Error
}

// markReminded records a reminder unless one was sent after notBefore or
// the document moved on.
func (s store) markReminded(ctx context.Context, t Tables, doc Document, now, notAfter time.Time) (bool, error) {
	res := s.db.Conn(ctx).Table(t.Documents).
		Where("id = ? AND phase = ? AND sla_deadline = ? AND (sla_reminded_at IS NULL OR sla_reminded_at <= ?)", doc.ID, doc.Phase, *doc.Deadline, notAfter).
		Update("sla_reminded_at", now)
	return res.RowsAffected == 1, res.Error
}

// heads maps every document (deleted ones too) to its chain head.
func (s store) heads(ctx context.Context, t Tables) (map[string]string, error) {
	rows, err := s.db.Conn(ctx).Table(t.Documents).Select("id, history_hash").Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, head string
		if err := rows.Scan(&id, &head); err != nil {
			return nil, err
		}
		out[id] = head
	}
	return out, rows.Err()
}

// eachHistory streams every history row, grouped by document and in time
// order within one, until fn returns false.
func (s store) eachHistory(ctx context.Context, t Tables, fn func(docID string, row HistoryRow) bool) (int, error) {
	rows, err := s.db.Conn(ctx).Table(t.History).
		Select("id, " + t.Key + ", from_phase, to_phase, approver_user_id, decision, comment, approved_at, hash, prev_hash").
		Order(t.Key + ", approved_at, id").Rows()
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var row HistoryRow
		l := &row.Link
		if err := rows.Scan(&row.ID, &l.DocumentID, &l.From, &l.To, &l.ApproverID, &l.Decision, &l.Comment, &l.At, &row.Hash, &row.PrevHash); err != nil {
			return n, err
		}
		n++
		if !fn(l.DocumentID, row) {
			break
		}
	}
	return n, rows.Err()
}

type pinnedRow struct {
	ID, Phase, HistoryHash string
	DefinitionID           string `gorm:"column:workflow_definition_id"`
}

// pinned lists the live documents pinned to a definition in one of phases
// and, on Postgres, locks them (in id order) until the transaction ends. A
// migration re-pins them all in one transaction, and each re-pin updates
// the counts (counters.go): locking every document first means the
// migration never waits for a document while holding a count row that a
// concurrent move of that document needs next (a deadlock).
func (s store) pinned(ctx context.Context, t Tables, definitionID string, phases []string) ([]pinnedRow, error) {
	var rows []pinnedRow
	q := s.db.Conn(ctx).Table(t.Documents).Select("id, phase, history_hash, workflow_definition_id").
		Where("deleted_at IS NULL AND workflow_definition_id = ? AND phase IN ?", definitionID, append(phases, "")).
		Order("id")
	if s.db.Dialect() == db.Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	err := q.Scan(&rows).Error
	return rows, err
}

// pinnedOne reads one live document's workflow state again.
func (s store) pinnedOne(ctx context.Context, t Tables, id string) (pinnedRow, bool, error) {
	var rows []pinnedRow
	err := s.db.Conn(ctx).Table(t.Documents).Select("id, phase, history_hash, workflow_definition_id").
		Where("deleted_at IS NULL AND id = ?", id).Limit(1).Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return pinnedRow{}, false, err
	}
	return rows[0], true, nil
}

// repin moves a document to another definition, keeping its phase and
// deadline, if it is still where it was read.
func (s store) repin(ctx context.Context, t Tables, m *Moved, fromID, toID string) (bool, error) {
	res := s.db.Conn(ctx).Table(t.Documents).
		Where("id = ? AND phase = ? AND history_hash = ? AND workflow_definition_id = ? AND deleted_at IS NULL",
			m.Doc.ID, m.From, m.Doc.HistoryHash, fromID).
		Updates(map[string]any{"workflow_definition_id": toID, "history_hash": m.Hash, "updated_at": m.At,
			"updated_by": m.ActorID, "version": gorm.Expr("version + 1")})
	return res.RowsAffected == 1, res.Error
}

// history reads one document's history rows, oldest first.
func (s store) history(ctx context.Context, t Tables, id string) ([]HistoryEntry, error) {
	rows := []HistoryEntry{}
	err := s.db.Conn(ctx).Table(t.History).
		Select("id, from_phase, to_phase, decision, comment, approver_user_id, approved_at").
		Where(t.Key+" = ?", id).Order("approved_at, id").Scan(&rows).Error
	for i := range rows {
		rows[i].ApprovedAt = rows[i].ApprovedAt.UTC()
	}
	return rows, err
}
