package runtime

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
)

// The runtime counts each kind's live documents per (definition, phase,
// has a deadline) in workflow_counts, so that an inbox's exact total is a
// sum of a few rows instead of a count of thousands of documents. Triggers
// on the kind's documents table keep the counts in the writing statement's
// transaction, whoever writes: a move, the SLA job, a migration to another
// version, the kind's own create and delete, a bulk load in SQL. They are
// derived data, so like the search indexes they are managed here rather
// than by the kind's numbered migrations: EnsureCounters creates missing
// triggers and recounts the kind from its rows, under a lock that holds
// writers off.

// counterVersion names the triggers; a new trigger body takes a new
// version, which makes EnsureCounters replace the triggers and recount.
const counterVersion = "wfc1"

// counterStripes spreads a Postgres count over rows by backend, so moves
// on separate connections update separate rows (workflow_count_add).
const counterStripes = 16

// EnsureCounters puts the counting triggers on every registered kind's
// documents table that lacks them and recounts that kind. The kernel seeds
// one node at a time, so two nodes never do this side by side.
func (r *Runtime) EnsureCounters(ctx context.Context) error {
	for _, k := range r.Kinds() {
		if k.Tables.Documents == "" { // declared for the designer only
			continue
		}
		if err := r.ensureCounters(ctx, k); err != nil {
			return fmt.Errorf("workflow counters of %s: %w", k.Name, err)
		}
	}
	return nil
}

func (r *Runtime) ensureCounters(ctx context.Context, k Kind) error {
	t := k.Tables.Documents
	return r.db.InTx(ctx, func(ctx context.Context) error {
		tx := r.db.Conn(ctx)
		var have int64
		var stmts []string
		if r.db.Dialect() == db.Postgres {
			if err := tx.Raw(`SELECT COUNT(*) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
				WHERE c.relname = ? AND c.relnamespace = current_schema()::regnamespace AND g.tgname = ?`,
				t, t+"_"+counterVersion).Scan(&have).Error; err != nil {
				return err
			}
			if have == 1 {
				return nil
			}
			// Writers wait for the recount; readers go on.
			stmts = append([]string{`LOCK TABLE ` + t + ` IN SHARE ROW EXCLUSIVE MODE`}, postgresCounterTriggers(k)...)
		} else {
			if err := tx.Raw(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name LIKE ?`,
				t, t+"_"+counterVersion+"_%").Scan(&have).Error; err != nil {
				return err
			}
			if have == 3 {
				return nil
			}
			stmts = sqliteCounterTriggers(k)
		}
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return recount(tx, k)
	})
}

// recount replaces the kind's counts with those of its rows.
func recount(tx *gorm.DB, k Kind) error {
	if err := tx.Exec(`DELETE FROM workflow_counts WHERE kind = ?`, k.Name).Error; err != nil {
		return err
	}
	return tx.Exec(`INSERT INTO workflow_counts (kind, definition_id, phase, dated, stripe, n)
		SELECT ?, workflow_definition_id, phase, CASE WHEN sla_deadline IS NULL THEN 0 ELSE 1 END, 0, COUNT(*)
		FROM `+k.Tables.Documents+` WHERE deleted_at IS NULL
		GROUP BY workflow_definition_id, phase, CASE WHEN sla_deadline IS NULL THEN 0 ELSE 1 END`, k.Name).Error
}

// sqliteCounterTriggers count on SQLite, whose one writer needs no
// stripes. A document's key is (definition, phase, has a deadline) while it
// is live; an update that changes the key or liveness moves one count.
func sqliteCounterTriggers(k Kind) []string {
	t, name := k.Tables.Documents, sqlString(k.Name)
	add := func(row, delta string) string {
		return `INSERT INTO workflow_counts (kind, definition_id, phase, dated, stripe, n)
			SELECT ` + name + `, ` + row + `.workflow_definition_id, ` + row + `.phase, ` + row + `.sla_deadline IS NOT NULL, 0, ` + delta + `
			WHERE ` + row + `.deleted_at IS NULL
			ON CONFLICT (kind, definition_id, phase, dated, stripe) DO UPDATE SET n = n + excluded.n;`
	}
	changed := `(NEW.deleted_at IS NULL) <> (OLD.deleted_at IS NULL) OR NEW.phase IS NOT OLD.phase
		OR NEW.workflow_definition_id IS NOT OLD.workflow_definition_id OR (NEW.sla_deadline IS NULL) <> (OLD.sla_deadline IS NULL)`
	p := t + "_" + counterVersion
	return []string{
		`DROP TRIGGER IF EXISTS ` + p + `_insert`, `DROP TRIGGER IF EXISTS ` + p + `_update`, `DROP TRIGGER IF EXISTS ` + p + `_delete`,
		`CREATE TRIGGER ` + p + `_insert AFTER INSERT ON ` + t + ` BEGIN ` + add("NEW", "1") + ` END`,
		`CREATE TRIGGER ` + p + `_update AFTER UPDATE OF phase, workflow_definition_id, sla_deadline, deleted_at ON ` + t +
			` WHEN ` + changed + ` BEGIN ` + add("OLD", "-1") + add("NEW", "1") + ` END`,
		`CREATE TRIGGER ` + p + `_delete AFTER DELETE ON ` + t + ` BEGIN ` + add("OLD", "-1") + ` END`,
	}
}

// postgresCounterTriggers count on Postgres through workflow_count_add
// (migration 4), on the writer's stripe. A move changes two counts; they
// are changed in key order, so two moves in opposite directions on one
// stripe cannot deadlock.
func postgresCounterTriggers(k Kind) []string {
	t, name := k.Tables.Documents, sqlString(k.Name)
	fn := t + "_" + counterVersion
	return []string{
		`CREATE OR REPLACE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $$
		DECLARE
			o_live BOOLEAN := TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL;
			n_live BOOLEAN := TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL;
			o_key TEXT; n_key TEXT;
		BEGIN
			IF o_live THEN o_key := OLD.workflow_definition_id || '/' || OLD.phase || '/' || (OLD.sla_deadline IS NOT NULL)::int; END IF;
			IF n_live THEN n_key := NEW.workflow_definition_id || '/' || NEW.phase || '/' || (NEW.sla_deadline IS NOT NULL)::int; END IF;
			IF o_key IS NOT DISTINCT FROM n_key THEN RETURN NULL; END IF;
			IF o_live AND (NOT n_live OR o_key < n_key) THEN
				PERFORM workflow_count_add(` + name + `, OLD.workflow_definition_id, OLD.phase, (OLD.sla_deadline IS NOT NULL)::int::smallint, -1);
			END IF;
			IF n_live THEN
				PERFORM workflow_count_add(` + name + `, NEW.workflow_definition_id, NEW.phase, (NEW.sla_deadline IS NOT NULL)::int::smallint, 1);
			END IF;
			IF o_live AND n_live AND o_key > n_key THEN
				PERFORM workflow_count_add(` + name + `, OLD.workflow_definition_id, OLD.phase, (OLD.sla_deadline IS NOT NULL)::int::smallint, -1);
			END IF;
			RETURN NULL;
		END $$`,
		`DROP TRIGGER IF EXISTS ` + fn + ` ON ` + t,
		`CREATE TRIGGER ` + fn + ` AFTER INSERT OR DELETE OR UPDATE OF phase, workflow_definition_id, sla_deadline, deleted_at
			ON ` + t + ` FOR EACH ROW EXECUTE FUNCTION ` + fn + `()`,
	}
}

// sqlString quotes a registered name as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// countByPhase sums the live documents pinned to a definition per phase.
func (s store) countByPhase(ctx context.Context, kind, definitionID string, phases []string) (map[string]int64, error) {
	var rows []struct {
		Phase string
		N     int64
	}
	err := s.db.Conn(ctx).Table("workflow_counts").Select("phase, CAST(SUM(n) AS BIGINT) AS n").
		Where("kind = ? AND definition_id = ? AND phase IN ?", kind, definitionID, phases).
		Group("phase").Scan(&rows).Error
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Phase] = r.N
	}
	return out, err
}

// inboxCount is the statement that sums the counts of what Inbox()
// selects: every document of the kind with a deadline for a scope that sees
// all, else those of the scope's (definitions, phases) pairs; "" when the
// scope sees none. Written out rather than built by GORM's chain: every
// inbox page runs it.
func (sc Scope) inboxCount() (string, []any) {
	if !sc.all && len(sc.phases) == 0 {
		return "", nil
	}
	var q strings.Builder
	q.WriteString(`SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM workflow_counts WHERE kind = ? AND dated = 1`)
	args := []any{sc.kind}
	if !sc.all {
		for i, dp := range sc.phases {
			if i == 0 {
				q.WriteString(` AND (`)
			} else {
				q.WriteString(` OR `)
			}
			q.WriteString(`(definition_id IN ? AND phase IN ?)`)
			args = append(args, dp.definitionIDs, dp.phases)
		}
		q.WriteString(`)`)
	}
	return q.String(), args
}

// InboxCount is how many live documents Inbox() matches, from the counts.
func (sc Scope) InboxCount(ctx context.Context) (int64, error) {
	q, args := sc.inboxCount()
	if q == "" {
		return 0, nil
	}
	var n int64
	err := sc.db.Conn(ctx).Raw(q, args...).Row().Scan(&n)
	return n, err
}

// AllCount is how many live documents of the kind are in phase (in every
// phase when phase is ""), from the counts: the exact total of a list that
// a caller who sees every document (All) filters by phase alone.
func (sc Scope) AllCount(ctx context.Context, phase string) (int64, error) {
	q, args := `SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM workflow_counts WHERE kind = ?`, []any{sc.kind}
	if phase != "" {
		q, args = q+` AND phase = ?`, append(args, phase)
	}
	var n int64
	err := sc.db.Conn(ctx).Raw(q, args...).Row().Scan(&n)
	return n, err
}

// InboxPage reads one page of q, a kind's live documents, under sc.Inbox()
// in the order of req, columns into each row's fields, and the exact total
// from the runtime's counts as one more column of the same statement (one
// round trip, and the rows and the total from one snapshot); only a page
// past the end, with no row to carry it, counts apart.
func InboxPage[T any](ctx context.Context, sc Scope, q *gorm.DB, columns string, req paging.Request, fields func(*T) []any) ([]T, int64, error) {
	count, countArgs := sc.inboxCount()
	if count == "" {
		return []T{}, 0, nil
	}
	cond, args := sc.Inbox()
	var total int64
	out, err := db.CollectRows(db.Page(q.Select(columns+", ("+count+") AS inbox_total", countArgs...).Where(cond, args...), req),
		req.PageSize, func(t *T) []any { return append(fields(t), &total) })
	if err != nil {
		return nil, 0, err
	}
	if len(out) == 0 && req.Offset() > 0 {
		total, err = sc.InboxCount(ctx)
	}
	return out, total, err
}
