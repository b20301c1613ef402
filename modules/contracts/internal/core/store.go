package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/plugin/dbresolver"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
)

// store is the only code that touches the contract tables.
type store struct {
	db    *db.DB
	parts *search.Partitioned // the trigram index by phase (SQLite with FTS5; nil elsewhere)
	words *search.WordIndex   // the word index by phase (Postgres; nil elsewhere)
}

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

// live selects contracts that are not deleted.
func (s *store) live(ctx context.Context) *gorm.DB {
	return s.conn(ctx).Model(&Contract{}).Where("contracts.deleted_at IS NULL")
}

type listFilter struct {
	Phase, SupplierID, ProjectID, ContractType string
	Search                                     string
	SupplierMatches                            []string // suppliers whose name matches Search
}

func (s *store) list(ctx context.Context, sc workflowdesigner.Scope, f listFilter, req paging.Request) ([]Contract, int64, error) {
	words := search.Words(f.Search)
	if inCreatedOrder(req) && search.Indexed(words) {
		switch {
		case s.words != nil:
			return s.wordSearch(ctx, sc, f, words, req)
		case s.parts != nil && f.Phase != "":
			return s.phaseSearch(ctx, sc, f, words, req)
		}
	}
	if len(words) == 0 || s.parts == nil || !inCreatedOrder(req) {
		q := s.listQuery(ctx, sc, f, words, false)
		count := func() (int64, error) {
			var n int64
			return n, q.Count(&n).Error
		}
		if len(words) == 0 && sc.All() && f.SupplierID == "" && f.ProjectID == "" && f.ContractType == "" {
			// Every live contract, or one phase's: the workflow counts hold
			// the total, where COUNT(*) read them all (25 ms at 100 000).
			count = func() (int64, error) { return sc.AllCount(ctx, f.Phase) }
		}
		return pageOfSummaries(q, req, count)
	}
	// The count comes first: how many rows match decides how the page is
	// read (the page alone would not settle the count of a search anyway).
	var total int64
	if err := s.listQuery(ctx, sc, f, words, false).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	if total == 0 || int64(req.Offset()) >= total {
		return []Contract{}, total, nil
	}
	scanned, err := s.liveIn(ctx, f.Phase)
	if err != nil {
		return nil, 0, err
	}
	walk := walkOrder(total, scanned, req)
	rows, err := scanSummaries(db.Page(s.listQuery(ctx, sc, f, words, walk).Select(summaryColumns), req), req.PageSize)
	return rows, total, err
}

// wordSearch reads a search's page and its exact count in one statement
// on Postgres: m holds the (id, created_at) of every match (the exact
// count reads every match anyway); the count is m's size and the page the
// top of m, whose rows are then read by primary key. When nothing but the
// words and the phase narrows the list (a caller who sees every contract,
// no other filter, every word of three runes or more), m comes from the
// word index alone (search.WordIndex.Matches), without reading a contract;
// otherwise from the list's condition. Ids are compared as UUIDs, as the
// index holds them; only the page's 20 are cast to text.
func (s *store) wordSearch(ctx context.Context, sc workflowdesigner.Scope, f listFilter, words []string, req paging.Request) ([]Contract, int64, error) {
	dir := ""
	if req.Sort[0].Desc {
		dir = " DESC"
	}
	var m *gorm.DB
	indexOnly := false
	if sc.All() && f.SupplierID == "" && f.ProjectID == "" && f.ContractType == "" && len(f.SupplierMatches) == 0 {
		if q, args, ok := s.words.Matches(f.Phase, words); ok {
			m, indexOnly = s.conn(ctx).Raw(q, args...), true
		}
	}
	if m == nil {
		m = s.listQuery(ctx, sc, f, words, false).Select("CAST(contracts.id AS UUID) AS id, contracts.created_at")
	}
	q := s.conn(ctx).Raw(`WITH m AS MATERIALIZED (?)
		SELECT `+summaryColumns+`, (SELECT count(*) FROM m) AS total FROM contracts
		WHERE contracts.id IN (SELECT CAST(id AS VARCHAR) FROM (SELECT id FROM m ORDER BY created_at`+dir+`, id`+dir+` LIMIT ? OFFSET ?) p)
		ORDER BY contracts.created_at`+dir+`, CAST(contracts.id AS UUID)`+dir, m, req.PageSize, req.Offset())
	read := collect(q, req.PageSize)
	if indexOnly {
		// Every table by index whatever the words (the vocabulary's trigrams,
		// the words' and the contracts' primary keys): one plan serves every
		// search, where planning each one cost about as much as running it
		// (docs/query-plans.md, "A generic plan for the word index").
		read = func(fields func(*Contract) []any) ([]Contract, error) {
			var out []Contract
			err := s.db.ReadGenericPlan(ctx, db.Read{SQL: q.Statement.SQL.String(), Args: q.Statement.Vars, Scan: func(rows db.Rows) (err error) {
				out, err = db.CollectFrom(rows, req.PageSize, fields)
				return err
			}})
			return out, err
		}
	}
	return s.pageAndTotal(ctx, read, sc, f, words, req)
}

// pageReader reads the rows of a page's statement through fields.
type pageReader func(fields func(*Contract) []any) ([]Contract, error)

// collect is the pageReader of q.
func collect(q *gorm.DB, size int) pageReader {
	return func(fields func(*Contract) []any) ([]Contract, error) { return db.CollectRows(q, size, fields) }
}

// pageAndTotal reads a search's page with read, whose statement selects
// summaryColumns and then the count of every match on each row. An empty
// page says nothing of the count (a page past the end): the list's
// condition is then counted by itself.
func (s *store) pageAndTotal(ctx context.Context, read pageReader, sc workflowdesigner.Scope, f listFilter, words []string, req paging.Request) ([]Contract, int64, error) {
	var total int64
	out, err := read(func(c *Contract) []any { return append(summaryFields(c), &total) })
	if err != nil {
		return nil, 0, err
	}
	if len(out) == 0 {
		total = 0
		if req.Offset() > 0 {
			err = s.listQuery(ctx, sc, f, words, false).Count(&total).Error
		}
	}
	return out, total, err
}

// pageOfSummaries is db.PageOf for the summary columns: one page of q and,
// unless the page settles it, the count of q's rows from count.
func pageOfSummaries(q *gorm.DB, req paging.Request, count func() (int64, error)) ([]Contract, int64, error) {
	rows, err := scanSummaries(db.Page(q.Session(&gorm.Session{}).Select(summaryColumns), req), req.PageSize)
	if err != nil {
		return nil, 0, err
	}
	total, err := db.Total(req, len(rows), count)
	if err != nil {
		return nil, 0, err
	}
	return rows, total, nil
}

// phaseSearch reads a page of a phase's search and its exact count in one
// statement over the phase-partitioned trigram index (search.Partitioned):
// m holds the phase's matches of the words of three runes or more, read
// from the phase's stretch of the index, and the phase's pending rows,
// whose own text decides. Shorter words are checked with LIKE. The count
// reads m alone when nothing else narrows the list (Admin, no filter),
// else the rows of m; the page walks the phase's index
// (phase, created_at, id, deleted_at) in the list's order, probing m (the
// unary + keeps the probe from driving the page's plan), so it stops after
// a page of matches however common the words.
func (s *store) phaseSearch(ctx context.Context, sc workflowdesigner.Scope, f listFilter, words []string, req paging.Request) ([]Contract, int64, error) {
	var where strings.Builder
	var args []any
	and := func(cond string, a ...any) {
		where.WriteString(" AND " + cond)
		args = append(args, a...)
	}
	where.WriteString("contracts.deleted_at IS NULL")
	cond, cargs := sc.Visible()
	and(cond, cargs...)
	narrowed := !sc.All() || f.SupplierID != "" || f.ProjectID != "" || f.ContractType != "" || len(f.SupplierMatches) > 0
	if f.SupplierID != "" {
		and("contracts.supplier_id = ?", f.SupplierID)
	}
	if f.ProjectID != "" {
		and("contracts.project_id = ?", f.ProjectID)
	}
	if f.ContractType != "" {
		and("contracts.contract_type = ?", f.ContractType)
	}
	var long, short []string
	for _, w := range words {
		if search.Indexed([]string{w}) {
			long = append(long, w)
		} else {
			short = append(short, w)
		}
	}
	// The text condition, with a placeholder for the unary plus.
	stale, staleArgs := search.Likes("contracts", long)
	rest, restArgs := search.Likes("contracts", short)
	text := "%scontracts.rowid IN (SELECT rid FROM m) AND (NOT " + s.parts.Stale() + " OR (" + stale + ")) AND " + rest
	textArgs := append(staleArgs, restArgs...)
	if len(f.SupplierMatches) > 0 {
		text = "(" + text + ") OR contracts.supplier_id IN ?"
		textArgs = append(textArgs, f.SupplierMatches)
	}
	cands, all, err := s.parts.Candidates(ctx, f.Phase, long)
	if err != nil {
		return nil, 0, err
	}
	var count string
	if narrowed || len(short) > 0 {
		// The count is driven by m's rows: the unary + keeps the phase's
		// index, which holds far more rows, out of its plan.
		count = "(SELECT COUNT(*) FROM contracts WHERE " + where.String() + " AND +contracts.phase = ? AND (" + fmt.Sprintf(text, "") + "))"
		all = append(all, args...)
		all = append(all, f.Phase)
		all = append(all, textArgs...)
	} else {
		var countArgs []any
		count, countArgs = s.parts.Count("m", long)
		all = append(all, countArgs...)
	}
	dir := ""
	if req.Sort[0].Desc {
		dir = " DESC"
	}
	q := `WITH m(rid, filed) AS MATERIALIZED (` + cands + `)
		SELECT ` + summaryColumns + `, ` + count + ` AS total
		FROM contracts WHERE ` + where.String() + ` AND contracts.phase = ? AND (` + fmt.Sprintf(text, "+") + `)
		ORDER BY contracts.created_at` + dir + `, contracts.id` + dir + ` LIMIT ? OFFSET ?`
	all = append(all, args...)
	all = append(all, f.Phase)
	all = append(all, textArgs...)
	all = append(all, req.PageSize, req.Offset())
	// A raw statement that starts with WITH would go to the writer.
	return s.pageAndTotal(ctx, collect(s.conn(ctx).Clauses(dbresolver.Read).Raw(q, all...), req.PageSize), sc, f, words, req)
}

// inCreatedOrder reports whether a list is in the order of an index
// (created_at, id) the planner can walk.
func inCreatedOrder(req paging.Request) bool {
	return len(req.Sort) == 1 && req.Sort[0].Column == "contracts.created_at"
}

// walkOrder decides how a search reads its page, knowing that total of
// the scanned rows of the index match: walking the order visits about
// (offset+pageSize)·scanned/total rows, reading the matches and sorting
// them costs total rows and a sort (counted four times a visit).
func walkOrder(total, scanned int64, req paging.Request) bool {
	return total*total >= 4*int64(req.Offset()+req.PageSize)*scanned
}

// liveIn is how many live contracts are in phase (all when ""), from
// contract_totals.
func (s *store) liveIn(ctx context.Context, phase string) (int64, error) {
	q := s.conn(ctx).Table("contract_totals").Select("CAST(COALESCE(SUM(n), 0) AS BIGINT)").Where("dim = 'phase'")
	if phase != "" {
		q = q.Where("bucket = ?", phase)
	}
	var n int64
	err := q.Scan(&n).Error
	return n, err
}

// listQuery is the list's condition. Each search word narrows it through
// the trigram index by phase where there is one (walk, SQLite: written so
// that the plan walks the list's order rather than fetching every match;
// see Partitioned.Filter), else by LIKE.
func (s *store) listQuery(ctx context.Context, sc workflowdesigner.Scope, f listFilter, words []string, walk bool) *gorm.DB {
	cond, args := sc.Visible()
	q := s.live(ctx).Where(cond, args...)
	if f.Phase != "" {
		q = q.Where("contracts.phase = ?", f.Phase)
	}
	if f.SupplierID != "" {
		q = q.Where("contracts.supplier_id = ?", f.SupplierID)
	}
	if f.ProjectID != "" {
		q = q.Where("contracts.project_id = ?", f.ProjectID)
	}
	if f.ContractType != "" {
		q = q.Where("contracts.contract_type = ?", f.ContractType)
	}
	if len(words) > 0 {
		// Every word in the title or code, or a supplier whose name matches.
		own := s.conn(ctx).Session(&gorm.Session{NewDB: true})
		for _, w := range words {
			switch {
			case s.parts != nil && walk:
				own = s.parts.Filter(own, w)
			case s.parts != nil:
				own = s.parts.Match(own, w)
			case s.words != nil:
				own = s.words.Match(own, f.Phase, w)
			default:
				own = search.Match(own, "contracts", false, w)
			}
		}
		if len(f.SupplierMatches) > 0 {
			own = s.conn(ctx).Session(&gorm.Session{NewDB: true}).Where(own).Or("contracts.supplier_id IN ?", f.SupplierMatches)
		}
		q = q.Where(own)
	}
	return q
}

// inbox lists the contracts waiting in a phase the caller's roles see,
// most urgent first; Admin's inbox holds every contract that has a deadline.
func (s *store) inbox(ctx context.Context, sc workflowdesigner.Scope, req paging.Request) ([]Contract, int64, error) {
	req.Sort = []paging.Order{{Column: "contracts.sla_deadline"}}
	return workflowdesigner.InboxPage(ctx, sc, s.live(ctx), summaryColumns, req, summaryFields)
}

// summaryColumns are the columns a row of a list or an inbox shows, in the
// order of scanSummaries.
const summaryColumns = `contracts.id, contracts.title, contracts.contract_type, contracts.phase, contracts.ma_hop_dong,
	contracts.value, contracts.currency, contracts.bypass_procurement_and_ccm, contracts.sla_deadline,
	contracts.supplier_id, contracts.project_id, contracts.drafter_id, contracts.created_at, contracts.version`

// scanSummaries reads the rows of q, which selects summaryColumns (size of
// them expected), with plain Scan calls: GORM's reflective scan of whole
// contracts was a third of an inbox's time.
func scanSummaries(q *gorm.DB, size int) ([]Contract, error) {
	return db.CollectRows(q, size, summaryFields)
}

// summaryFields are the destinations of summaryColumns in c.
func summaryFields(c *Contract) []any {
	return []any{&c.ID, &c.Title, &c.ContractType, &c.Phase, &c.MaHopDong, &c.Value, &c.Currency,
		&c.BypassProcurementAndCCM, &c.SLADeadline, &c.SupplierID, &c.ProjectID, &c.DrafterID, &c.CreatedAt, &c.Version}
}

// contractColumns are the columns readContract reads, in its order:
// every column but search_text and the deletion stamp (a live contract has
// none).
const contractColumns = `id, title, contract_type, template_id, supplier_id, project_id, department_id, value, currency,
	bypass_procurement_and_ccm, phase, sla_deadline, sla_warning_sent, ma_hop_dong, draft_data, drafter_id,
	workflow_definition_id, history_hash, purchase_evaluation_id, budget_line_id, description, start_date, end_date,
	version, created_at, created_by, updated_at, updated_by`

// readContract reads the live contract id into *out, left nil when there
// is none, with a written-out query and plain Scan calls: GORM's reflective
// scan of 31 columns was most of its cost.
func readContract(id string, out **Contract) db.Read {
	return db.Read{SQL: `SELECT ` + contractColumns + ` FROM contracts WHERE id = $1 AND deleted_at IS NULL`, Args: []any{id},
		Scan: func(rows db.Rows) error {
			if !rows.Next() {
				return rows.Err()
			}
			var c Contract
			if err := rows.Scan(&c.ID, &c.Title, &c.ContractType, &c.TemplateID, &c.SupplierID, &c.ProjectID, &c.DepartmentID,
				&c.Value, &c.Currency, &c.BypassProcurementAndCCM, &c.Phase, &c.SLADeadline, &c.SLAWarningSent, &c.MaHopDong,
				&c.DraftData, &c.DrafterID, &c.WorkflowDefinitionID, &c.HistoryHash, &c.PurchaseEvaluationID, &c.BudgetLineID,
				&c.Description, &c.StartDate, &c.EndDate, &c.Version, &c.CreatedAt, &c.CreatedBy, &c.UpdatedAt, &c.UpdatedBy); err != nil {
				return err
			}
			*out = &c
			return nil
		}}
}

// get reads one live contract (gorm.ErrRecordNotFound when there is none).
func (s *store) get(ctx context.Context, id string) (*Contract, error) {
	var c *Contract
	if err := s.db.Batch(ctx, readContract(id, &c)); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, gorm.ErrRecordNotFound
	}
	return c, nil
}

// withThread reads the live contract id (nil when it is not there) and its
// thread, in one round trip on Postgres (db.Batch).
func (s *store) withThread(ctx context.Context, id string) (*Contract, thread, error) {
	var (
		c  *Contract
		th thread
	)
	err := s.db.Batch(ctx, readContract(id, &c), threadRead(id, &th))
	return c, th, err
}

// create inserts a new contract with one statement written out, below
// GORM: building an INSERT of 31 columns by reflection was a good part of a
// create's cost. Placeholders are $1…$n in order, which both engines read.
func (s *store) create(ctx context.Context, c *Contract) error {
	_, err := s.conn(ctx).Statement.ConnPool.ExecContext(ctx, `INSERT INTO contracts (id, title, contract_type, template_id,
		supplier_id, project_id, department_id, value, currency, bypass_procurement_and_ccm, phase, sla_deadline,
		sla_warning_sent, ma_hop_dong, search_text, draft_data, drafter_id, workflow_definition_id, history_hash,
		purchase_evaluation_id, budget_line_id, description, start_date, end_date, version, created_at, created_by,
		updated_at, updated_by, deleted_at, deleted_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
		$24, $25, $26, $27, $28, $29, $30, $31)`,
		c.ID, c.Title, c.ContractType, c.TemplateID, c.SupplierID, c.ProjectID, c.DepartmentID, c.Value, c.Currency,
		c.BypassProcurementAndCCM, c.Phase, c.SLADeadline, c.SLAWarningSent, c.MaHopDong, c.SearchText, c.DraftData,
		c.DrafterID, c.WorkflowDefinitionID, c.HistoryHash, c.PurchaseEvaluationID, c.BudgetLineID, c.Description,
		c.StartDate, c.EndDate, c.Version, c.CreatedAt, c.CreatedBy, c.UpdatedAt, c.UpdatedBy, c.DeletedAt, c.DeletedBy)
	return err
}

// update writes the given columns when the row is still at version; false
// means another writer got there first.
func (s *store) update(ctx context.Context, id string, version int, cols map[string]any) (bool, error) {
	cols["version"] = gorm.Expr("version + 1")
	res := s.conn(ctx).Model(&Contract{}).Where("id = ? AND version = ? AND deleted_at IS NULL", id, version).Updates(cols)
	return res.RowsAffected == 1, res.Error
}

func (s *store) insert(ctx context.Context, v any) error { return s.conn(ctx).Create(v).Error }

// thread is what a contract's detail shows below the contract: its
// approvals (the history the workflow runtime writes into this module's
// contract_approvals), comments and attachments, each oldest first.
type thread struct {
	approvals   []workflowdesigner.HistoryEntry
	comments    []Comment
	attachments []Attachment
}

// threadQuery reads the three lists in one statement (one round trip, one
// read transaction on SQLite, instead of three), each from an index on
// (contract_id, time, id) that gives its order (migration 10), merged by
// time; the kind k sorts them apart again. The columns
// are shared by position: kind, id, time, user, then per kind
// approval:   from_phase, to_phase,  decision,     comment
// comment:    phase,      content,   (empty),      (empty)
// attachment: file_name,  purpose,   content_type, unfilled_placeholders (and size).
const threadQuery = `SELECT 0 AS k, id, approved_at AS ts, approver_user_id AS who, from_phase AS a, to_phase AS b,
		decision AS c, comment AS d, 0 AS size FROM contract_approvals WHERE contract_id = $1
	UNION ALL SELECT 1, id, created_at, author_id, phase, content, '', '', 0 FROM contract_comments WHERE contract_id = $1
	UNION ALL SELECT 2, id, created_at, uploaded_by, file_name, purpose, content_type, unfilled_placeholders, size
		FROM contract_attachments WHERE contract_id = $1
	ORDER BY ts, id`

// threadRead reads contract id's thread into *t.
func threadRead(id string, t *thread) db.Read {
	return db.Read{SQL: threadQuery, Args: []any{id}, Scan: func(rows db.Rows) error {
		*t = thread{approvals: []workflowdesigner.HistoryEntry{}}
		for rows.Next() {
			var (
				kind       int
				rowID      string
				at         time.Time
				who        *string
				a, b, c, d string
				size       int64
			)
			if err := rows.Scan(&kind, &rowID, &at, &who, &a, &b, &c, &d, &size); err != nil {
				return err
			}
			switch kind {
			case 0:
				t.approvals = append(t.approvals, workflowdesigner.HistoryEntry{ID: rowID, FromPhase: a, ToPhase: b, Decision: c,
					Comment: d, ApproverUserID: who, ApprovedAt: at.UTC()})
			case 1:
				t.comments = append(t.comments, Comment{ID: rowID, ContractID: id, Phase: a, Content: b, AuthorID: deref(who), CreatedAt: at})
			default:
				t.attachments = append(t.attachments, Attachment{ID: rowID, ContractID: id, FileName: a, Purpose: b, ContentType: c,
					UnfilledPlaceholders: d, Size: size, UploadedBy: deref(who), CreatedAt: at})
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

func (s *store) attachment(ctx context.Context, contractID, id string) (*Attachment, error) {
	var a Attachment
	if err := s.conn(ctx).Where("contract_id = ? AND id = ?", contractID, id).Take(&a).Error; err != nil {
		return nil, err
	}
	return &a, nil
}

func (s *store) deleteAttachment(ctx context.Context, id string) error {
	return s.conn(ctx).Where("id = ?", id).Delete(&Attachment{}).Error
}

// referencing reports whether a live contract names the master-data record.
func (s *store) referencing(ctx context.Context, column, id string) (bool, error) {
	var n int64
	err := s.live(ctx).Where(column+" = ?", id).Limit(1).Count(&n).Error
	return n > 0, err
}
