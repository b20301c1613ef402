package core

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
)

// store is the only code that touches the procurement tables.
type store struct {
	db      *db.DB
	indexed bool // a trigram index serves search_text (SQLite with FTS5)
}

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

// live selects evaluations that are not deleted.
func (s *store) live(ctx context.Context) *gorm.DB {
	return s.conn(ctx).Model(&Evaluation{}).Where("purchase_evaluations.deleted_at IS NULL")
}

type listFilter struct {
	Phase, Policy, ProjectID, Search string
}

func (s *store) list(ctx context.Context, sc workflowdesigner.Scope, f listFilter, req paging.Request) ([]Evaluation, int64, error) {
	cond, args := sc.Visible()
	q := s.live(ctx).Where(cond, args...)
	if f.Phase != "" {
		q = q.Where("purchase_evaluations.phase = ?", f.Phase)
	}
	if f.Policy != "" {
		q = q.Where("purchase_evaluations.policy = ?", f.Policy)
	}
	if f.ProjectID != "" {
		q = q.Where("purchase_evaluations.project_id = ?", f.ProjectID)
	}
	words := search.Words(f.Search)
	for _, w := range words {
		q = search.Match(q, "purchase_evaluations", s.indexed, w)
	}
	if sc.All() && f.Policy == "" && f.ProjectID == "" && len(words) == 0 {
		// Every live evaluation, or one phase's: the workflow counts hold
		// the total, where COUNT(*) read them all.
		return db.PageCounted[Evaluation](q, req, func() (int64, error) { return sc.AllCount(ctx, f.Phase) })
	}
	return db.PageOf[Evaluation](q, req)
}

// inbox lists the evaluations waiting in a phase the caller's roles see,
// most urgent first, as their summaries.
func (s *store) inbox(ctx context.Context, sc workflowdesigner.Scope, req paging.Request) ([]Evaluation, int64, error) {
	req.Sort = []paging.Order{{Column: "purchase_evaluations.sla_deadline"}}
	return workflowdesigner.InboxPage(ctx, sc, s.live(ctx), summaryColumns, req, summaryFields)
}

// summaryColumns are the columns a row of the inbox shows, in the order of
// summaryFields.
const summaryColumns = `purchase_evaluations.id, purchase_evaluations.ma_phieu, purchase_evaluations.policy,
	purchase_evaluations.title, purchase_evaluations.category, purchase_evaluations.project_id,
	purchase_evaluations.estimated_value, purchase_evaluations.currency, purchase_evaluations.phase,
	purchase_evaluations.sla_deadline, purchase_evaluations.selected_quotation_id, purchase_evaluations.contract_id,
	purchase_evaluations.created_by, purchase_evaluations.created_at, purchase_evaluations.version`

// summaryFields are the destinations of summaryColumns in e, read with
// plain Scan calls: GORM's reflective scan of whole evaluations (28
// columns, the description among them) was most of an inbox's time.
func summaryFields(e *Evaluation) []any {
	return []any{&e.ID, &e.MaPhieu, &e.Policy, &e.Title, &e.Category, &e.ProjectID, &e.EstimatedValue, &e.Currency,
		&e.Phase, &e.SLADeadline, &e.SelectedQuotationID, &e.ContractID, &e.CreatedBy, &e.CreatedAt, &e.Version}
}

// evaluationColumns are the columns get and locked read, in the order of
// scanEvaluation: every column but search_text and the deletion stamp (a
// live evaluation has none).
const evaluationColumns = `id, ma_phieu, policy, title, project_id, department_id, category, description, estimated_value,
	currency, selected_quotation_id, selection_reason, payment_terms, contract_id, approved_at, phase, sla_deadline,
	sla_warning_sent, workflow_definition_id, history_hash, version, created_at, created_by, updated_at, updated_by`

// readEvaluation reads the live evaluation id into *out, left nil when
// there is none (or it is not in phase, unless phase is empty), with plain
// Scan calls: GORM's reflective scan of 28 columns was most of a get's cost.
// With lock it holds the row's lock to the end of the transaction in ctx:
// on Postgres FOR UPDATE, which conflicts with every writer's UPDATE of the
// row without writing a row version of its own (the UPDATE … SET version =
// version it replaced did, on every move); on SQLite the transaction is
// already the one writer's, so a plain read holds.
func (s *store) readEvaluation(id, phase string, lock bool, out **Evaluation) db.Read {
	q, args := `SELECT `+evaluationColumns+` FROM purchase_evaluations WHERE id = $1 AND deleted_at IS NULL`, []any{id}
	if phase != "" {
		q, args = q+` AND phase = $2`, append(args, phase)
	}
	if lock && s.db.Dialect() == db.Postgres {
		q += ` FOR UPDATE`
	}
	return db.Read{SQL: q, Args: args, Scan: func(rows db.Rows) error {
		if !rows.Next() {
			return rows.Err()
		}
		var e Evaluation
		if err := rows.Scan(&e.ID, &e.MaPhieu, &e.Policy, &e.Title, &e.ProjectID, &e.DepartmentID, &e.Category, &e.Description,
			&e.EstimatedValue, &e.Currency, &e.SelectedQuotationID, &e.SelectionReason, &e.PaymentTerms, &e.ContractID,
			&e.ApprovedAt, &e.Phase, &e.SLADeadline, &e.SLAWarningSent, &e.WorkflowDefinitionID, &e.HistoryHash, &e.Version,
			&e.CreatedAt, &e.CreatedBy, &e.UpdatedAt, &e.UpdatedBy); err != nil {
			return err
		}
		*out = &e
		return nil
	}}
}

// get reads a live evaluation (gorm.ErrRecordNotFound when there is none).
func (s *store) get(ctx context.Context, id string) (*Evaluation, error) {
	var e *Evaluation
	if err := s.db.Batch(ctx, s.readEvaluation(id, "", false, &e)); err != nil {
		return nil, err
	}
	if e == nil {
		return nil, gorm.ErrRecordNotFound
	}
	return e, nil
}

// withThread reads the live evaluation id (nil when it is not there, or
// not in phase unless phase is empty) and then its thread, in one round
// trip on Postgres (db.Batch). With lock the evaluation's row lock is taken
// first, so the thread's read, which starts after it, sees every quotation
// and opinion committed before: their writers take the same lock.
func (s *store) withThread(ctx context.Context, id, phase string, lock bool) (*Evaluation, thread, error) {
	var (
		e *Evaluation
		t thread
	)
	err := s.db.Batch(ctx, s.readEvaluation(id, phase, lock, &e), threadRead(id, &t))
	return e, t, err
}

func (s *store) insert(ctx context.Context, v any) error { return s.conn(ctx).Create(v).Error }

// create inserts a new evaluation with one statement written out, below
// GORM (building an INSERT of 28 columns by reflection was a good part of a
// create's cost). Placeholders are $1…$n in order, which both engines read.
func (s *store) create(ctx context.Context, e *Evaluation) error {
	_, err := s.conn(ctx).Statement.ConnPool.ExecContext(ctx, `INSERT INTO purchase_evaluations (id, ma_phieu, policy, title,
		project_id, department_id, category, description, estimated_value, currency, selected_quotation_id, selection_reason,
		payment_terms, contract_id, approved_at, search_text, phase, sla_deadline, sla_warning_sent, workflow_definition_id,
		history_hash, version, created_at, created_by, updated_at, updated_by, deleted_at, deleted_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
		$25, $26, $27, $28)`,
		e.ID, e.MaPhieu, e.Policy, e.Title, e.ProjectID, e.DepartmentID, e.Category, e.Description, e.EstimatedValue, e.Currency,
		e.SelectedQuotationID, e.SelectionReason, e.PaymentTerms, e.ContractID, e.ApprovedAt, e.SearchText, e.Phase, e.SLADeadline,
		e.SLAWarningSent, e.WorkflowDefinitionID, e.HistoryHash, e.Version, e.CreatedAt, e.CreatedBy, e.UpdatedAt, e.UpdatedBy,
		e.DeletedAt, e.DeletedBy)
	return err
}

// update writes cols when the live row is still in phase (and at version,
// when given), bumping its version; false means it moved, changed or went.
// On Postgres the update holds the row lock to the end of the transaction,
// which orders the writes to an evaluation with its moves.
func (s *store) update(ctx context.Context, id, phase string, version *int, cols map[string]any) (bool, error) {
	cols["version"] = gorm.Expr("version + 1")
	q := s.live(ctx).Where("id = ? AND phase = ?", id, phase)
	if version != nil {
		q = q.Where("version = ?", *version)
	}
	res := q.Updates(cols)
	return res.RowsAffected == 1, res.Error
}

// lock takes the live row's lock while it is in phase, changing nothing,
// so that what the caller reads next stays as it is until it commits; false
// means it is not there (or no longer in phase).
func (s *store) lock(ctx context.Context, id, phase string) (bool, error) {
	var e *Evaluation
	err := s.db.Batch(ctx, s.readEvaluation(id, phase, true, &e))
	return e != nil, err
}

// claimContract reserves the approved evaluation for one contract: of
// concurrent claims one succeeds, the others wait for it and find the
// contract set (or, while it is being created, the row locked).
func (s *store) claimContract(ctx context.Context, id string) (bool, error) {
	res := s.conn(ctx).Exec(`UPDATE purchase_evaluations SET version = version + 1 WHERE id = ? AND phase = ? AND contract_id IS NULL AND deleted_at IS NULL`, id, DaDuyet)
	return res.RowsAffected == 1, res.Error
}

func (s *store) setContract(ctx context.Context, id, contractID, by string, at time.Time) error {
	return s.conn(ctx).Exec(`UPDATE purchase_evaluations SET contract_id = ?, updated_at = ?, updated_by = ? WHERE id = ? AND contract_id IS NULL`,
		contractID, at, by, id).Error
}

// thread is what an evaluation's detail shows below it: its quotations,
// cheapest first, its department opinions and its history (the rows the
// workflow runtime writes into this module's purchase_evaluation_history),
// each oldest first (a quotation carries what the detail shows of it).
type thread struct {
	quotations []Quotation
	opinions   []Opinion
	history    []workflowdesigner.HistoryEntry
}

// threadQuery reads the three lists in one statement (one round trip, one
// read transaction on SQLite, instead of three), each arm from its
// evaluation_id index; k sorts them apart, then each list's own order
// follows (amount, time, id for quotations; time, kind for opinions; time,
// id for history). The columns are shared by position: k, id, n, ts, s,
// who, then per kind
// history:   from_phase, to_phase, decision, comment,  approved_at, (null),        (null)
// quotation: supplier_id, notes,   (empty),  (empty),  created_at,  delivery_days, warranty_months
// opinion:   kind,        verdict, comment,  (empty),  updated_at,  (null),        (null)
// The history arm comes first: SQLite types a compound's columns by its
// first arm, and ts and t2 must come from timestamp columns to scan as times.
const threadQuery = `SELECT 2 AS k, id, 0 AS n, approved_at AS ts, id AS s, approver_user_id AS who, from_phase AS a,
		to_phase AS b, decision AS c, comment AS d, approved_at AS t2, NULL AS i1, NULL AS i2
		FROM purchase_evaluation_history WHERE evaluation_id = $1
	UNION ALL SELECT 0, id, amount, created_at, id, NULL, supplier_id, notes, '', '', created_at, delivery_days, warranty_months
		FROM purchase_evaluation_quotations WHERE evaluation_id = $1
	UNION ALL SELECT 1, id, 0, created_at, kind, user_id, kind, verdict, comment, '', updated_at, NULL, NULL
		FROM pe_dept_opinions WHERE evaluation_id = $1
	ORDER BY k, n, ts, s`

// threadRead reads evaluation id's thread into *t.
func threadRead(id string, t *thread) db.Read {
	return db.Read{SQL: threadQuery, Args: []any{id}, Scan: func(rows db.Rows) error {
		*t = thread{quotations: []Quotation{}, opinions: []Opinion{}, history: []workflowdesigner.HistoryEntry{}}
		for rows.Next() {
			var (
				kind        int
				rowID, sort string
				n           money.Amount
				ts, t2      time.Time
				who         *string
				a, b, c, d  string
				i1, i2      *int
			)
			if err := rows.Scan(&kind, &rowID, &n, &ts, &sort, &who, &a, &b, &c, &d, &t2, &i1, &i2); err != nil {
				return err
			}
			switch kind {
			case 0:
				t.quotations = append(t.quotations, Quotation{ID: rowID, EvaluationID: id, SupplierID: a, Amount: n,
					DeliveryDays: i1, WarrantyMonths: i2, Notes: b, CreatedAt: ts})
			case 1:
				t.opinions = append(t.opinions, Opinion{ID: rowID, EvaluationID: id, Kind: a, Verdict: b, Comment: c,
					UserID: deref(who), CreatedAt: ts, UpdatedAt: t2})
			default:
				t.history = append(t.history, workflowdesigner.HistoryEntry{ID: rowID, FromPhase: a, ToPhase: b, Decision: c,
					Comment: d, ApproverUserID: who, ApprovedAt: ts.UTC()})
			}
		}
		return rows.Err()
	}}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// quotations reads an evaluation's quotations, cheapest first, with a
// written-out query and plain Scan calls: GORM's reflective Find was most
// of its cost, and the submit's precondition reads them on every submit.
func (s *store) quotations(ctx context.Context, evaluationID string) ([]Quotation, error) {
	rows, err := s.db.Query(ctx, `SELECT id, supplier_id, amount, delivery_days, warranty_months, notes, created_at, created_by,
		updated_at, updated_by FROM purchase_evaluation_quotations WHERE evaluation_id = $1 ORDER BY amount, created_at, id`, evaluationID)
	return db.Collect(rows, err, 0, func(q *Quotation) []any {
		q.EvaluationID = evaluationID
		return []any{&q.ID, &q.SupplierID, &q.Amount, &q.DeliveryDays, &q.WarrantyMonths, &q.Notes, &q.CreatedAt,
			&q.CreatedBy, &q.UpdatedAt, &q.UpdatedBy}
	})
}

func (s *store) quotation(ctx context.Context, evaluationID, id string) (*Quotation, error) {
	var q Quotation
	if err := s.conn(ctx).Where("evaluation_id = ? AND id = ?", evaluationID, id).Take(&q).Error; err != nil {
		return nil, err
	}
	return &q, nil
}

func (s *store) updateQuotation(ctx context.Context, q *Quotation) error {
	return s.conn(ctx).Model(&Quotation{}).Where("id = ?", q.ID).Updates(map[string]any{"supplier_id": q.SupplierID,
		"amount": q.Amount, "delivery_days": q.DeliveryDays, "warranty_months": q.WarrantyMonths, "notes": q.Notes,
		"updated_at": q.UpdatedAt, "updated_by": q.UpdatedBy}).Error
}

func (s *store) deleteQuotation(ctx context.Context, id string) error {
	return s.conn(ctx).Where("id = ?", id).Delete(&Quotation{}).Error
}

// upsertOpinion saves the opinion of its kind, replacing the one before.
func (s *store) upsertOpinion(ctx context.Context, o *Opinion) error {
	return s.conn(ctx).Exec(`INSERT INTO pe_dept_opinions (id, evaluation_id, kind, verdict, comment, user_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (evaluation_id, kind) DO UPDATE SET verdict = excluded.verdict, comment = excluded.comment,
			user_id = excluded.user_id, updated_at = excluded.updated_at`,
		o.ID, o.EvaluationID, o.Kind, o.Verdict, o.Comment, o.UserID, o.CreatedAt, o.UpdatedAt).Error
}

// approvedWins counts the live approved evaluations whose winner names the
// supplier, and when the latest was approved.
func (s *store) approvedWins(ctx context.Context, supplierID string) (int64, *time.Time, error) {
	q := func() *gorm.DB {
		return s.live(ctx).Joins("JOIN purchase_evaluation_quotations q ON q.id = purchase_evaluations.selected_quotation_id").
			Where("purchase_evaluations.phase = ? AND q.supplier_id = ?", DaDuyet, supplierID)
	}
	var n int64
	if err := q().Count(&n).Error; err != nil || n == 0 {
		return n, nil, err
	}
	var last []Evaluation
	if err := q().Select("purchase_evaluations.approved_at").Where("purchase_evaluations.approved_at IS NOT NULL").
		Order("purchase_evaluations.approved_at DESC").Limit(1).Find(&last).Error; err != nil {
		return 0, nil, err
	}
	if len(last) == 0 {
		return n, nil, nil
	}
	return n, last[0].ApprovedAt, nil
}

// referencing reports whether a live evaluation names the master-data
// record: its project or department, or a supplier one of its quotations names.
func (s *store) referencing(ctx context.Context, column, id string) (bool, error) {
	var n int64
	q := s.live(ctx)
	if column == "supplier_id" {
		q = q.Where("EXISTS (SELECT 1 FROM purchase_evaluation_quotations q WHERE q.evaluation_id = purchase_evaluations.id AND q.supplier_id = ?)", id)
	} else {
		q = q.Where(column+" = ?", id)
	}
	err := q.Limit(1).Count(&n).Error
	return n > 0, err
}

// titled lists the titles among titles that an evaluation (live or
// deleted) already has, for the idempotent demo seed.
func (s *store) titled(ctx context.Context, titles []string) (map[string]bool, error) {
	var found []string
	if err := s.conn(ctx).Model(&Evaluation{}).Where("title IN ?", titles).Pluck("title", &found).Error; err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, t := range found {
		out[t] = true
	}
	return out, nil
}
