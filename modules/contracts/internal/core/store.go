package core

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/plugin/dbresolver"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
)

// store is the only code that touches the contract tables.
type store struct {
	db      *db.DB
	indexed bool // a trigram index serves search_text (SQLite with FTS5)
}

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

// live selects contracts that are not deleted.
func (s *store) live(ctx context.Context) *gorm.DB {
	return s.conn(ctx).Model(&Contract{}).Where("contracts.deleted_at IS NULL")
}

// scope is what a caller may see, applied in SQL so paging counts stay
// right: their own drafts, plus the phases of each pinned definition whose
// inbox roles they hold. Admin sees everything.
type scope struct {
	all    bool
	userID string
	phases []definitionPhases
}

// definitionPhases are the phases of one pinned definition a caller sees.
type definitionPhases struct {
	definitionID string
	phases       []string
}

func (sc scope) apply(q *gorm.DB, includeDrafts bool) *gorm.DB {
	if sc.all {
		return q
	}
	var conds []string
	var args []any
	if includeDrafts {
		conds = append(conds, "contracts.drafter_id = ?")
		args = append(args, sc.userID)
	}
	for _, dp := range sc.phases {
		if len(dp.phases) > 0 {
			conds = append(conds, "(contracts.workflow_definition_id = ? AND contracts.phase IN ?)")
			args = append(args, dp.definitionID, dp.phases)
		}
	}
	if len(conds) == 0 {
		return q.Where("1 = 0")
	}
	return q.Where("("+strings.Join(conds, " OR ")+")", args...)
}

type listFilter struct {
	Phase, SupplierID, ProjectID, ContractType string
	Search                                     string
	SupplierMatches                            []string // suppliers whose name matches Search
}

func (s *store) list(ctx context.Context, sc scope, f listFilter, req paging.Request) ([]Contract, int64, error) {
	q := sc.apply(s.live(ctx), true)
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
	if words := search.Words(f.Search); len(words) > 0 {
		// Every word in the title or code, or a supplier whose name matches.
		own := s.conn(ctx).Session(&gorm.Session{NewDB: true})
		for _, w := range words {
			own = search.Match(own, "contracts", s.indexed, w)
		}
		if len(f.SupplierMatches) > 0 {
			own = s.conn(ctx).Session(&gorm.Session{NewDB: true}).Where(own).Or("contracts.supplier_id IN ?", f.SupplierMatches)
		}
		q = q.Where(own)
	}
	return s.page(q, req)
}

// inbox lists the contracts waiting in a phase the caller's roles see,
// most urgent first; Admin's inbox holds every contract that has a deadline.
func (s *store) inbox(ctx context.Context, sc scope, req paging.Request) ([]Contract, int64, error) {
	q := sc.apply(s.live(ctx), false).Where("contracts.sla_deadline IS NOT NULL")
	req.Sort = []paging.Order{{Column: "contracts.sla_deadline"}}
	return s.page(q, req)
}

func (s *store) page(q *gorm.DB, req paging.Request) ([]Contract, int64, error) {
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var rows []Contract
	if total == 0 {
		return rows, 0, nil
	}
	if err := db.Page(q, req).Find(&rows).Error; err != nil {
		return nil, 0, err
	}
	return rows, total, nil
}

func (s *store) get(ctx context.Context, id string) (*Contract, error) {
	var c Contract
	if err := s.live(ctx).Where("id = ?", id).Take(&c).Error; err != nil {
		return nil, err
	}
	return &c, nil
}

func (s *store) create(ctx context.Context, c *Contract) error { return s.conn(ctx).Create(c).Error }

// update writes the given columns when the row is still at version; false
// means another writer got there first.
func (s *store) update(ctx context.Context, id string, version int, cols map[string]any) (bool, error) {
	cols["version"] = gorm.Expr("version + 1")
	res := s.conn(ctx).Model(&Contract{}).Where("id = ? AND version = ? AND deleted_at IS NULL", id, version).Updates(cols)
	return res.RowsAffected == 1, res.Error
}

// move is the compare-and-set of a transition: it succeeds only if the
// contract is still in from, so of two concurrent moves exactly one wins.
func (s *store) move(ctx context.Context, id, from string, cols map[string]any) (bool, error) {
	cols["version"] = gorm.Expr("version + 1")
	res := s.conn(ctx).Model(&Contract{}).Where("id = ? AND phase = ? AND deleted_at IS NULL", id, from).Updates(cols)
	return res.RowsAffected == 1, res.Error
}

// nextSeq increments a code prefix's counter atomically and returns it: the
// upsert takes the row lock on Postgres, and SQLite has one writer.
func (s *store) nextSeq(ctx context.Context, prefix string) (int, error) {
	var seq int
	err := s.conn(ctx).Clauses(dbresolver.Write).Raw(
		`INSERT INTO contract_code_sequences (prefix, last_seq) VALUES (?, 1)
		 ON CONFLICT (prefix) DO UPDATE SET last_seq = contract_code_sequences.last_seq + 1
		 RETURNING last_seq`, prefix).Scan(&seq).Error
	return seq, err
}

func (s *store) insert(ctx context.Context, v any) error { return s.conn(ctx).Create(v).Error }

func (s *store) approvals(ctx context.Context, id string) ([]Approval, error) {
	var rows []Approval
	err := s.conn(ctx).Where("contract_id = ?", id).Order("approved_at, id").Find(&rows).Error
	return rows, err
}

func (s *store) comments(ctx context.Context, id string) ([]Comment, error) {
	var rows []Comment
	err := s.conn(ctx).Where("contract_id = ?", id).Order("created_at, id").Find(&rows).Error
	return rows, err
}

func (s *store) attachments(ctx context.Context, id string) ([]Attachment, error) {
	var rows []Attachment
	err := s.conn(ctx).Where("contract_id = ?", id).Order("created_at, id").Find(&rows).Error
	return rows, err
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

// overdue lists contracts whose deadline passed, oldest first, after the
// keyset cursor (deadline, id) of the previous page.
func (s *store) overdue(ctx context.Context, now, afterDeadline time.Time, afterID string, limit int) ([]Contract, error) {
	var rows []Contract
	err := s.live(ctx).Where("sla_deadline IS NOT NULL AND sla_deadline < ?", now).
		Where("(sla_deadline > ? OR (sla_deadline = ? AND id > ?))", afterDeadline, afterDeadline, afterID).
		Order("sla_deadline, id").Limit(limit).Find(&rows).Error
	return rows, err
}

// dueSoon lists contracts within the warning window not yet warned.
func (s *store) dueSoon(ctx context.Context, now, until time.Time, limit int) ([]Contract, error) {
	var rows []Contract
	err := s.live(ctx).Where("sla_deadline IS NOT NULL AND sla_deadline >= ? AND sla_deadline < ? AND sla_warning_sent = ?", now, until, false).
		Order("sla_deadline, id").Limit(limit).Find(&rows).Error
	return rows, err
}

// markWarned sets the warning flag unless another node already did.
func (s *store) markWarned(ctx context.Context, id string, deadline time.Time) (bool, error) {
	res := s.conn(ctx).Model(&Contract{}).
		Where("id = ? AND sla_warning_sent = ? AND sla_deadline = ?", id, false, deadline).
		Update("sla_warning_sent", true)
	return res.RowsAffected == 1, res.Error
}
