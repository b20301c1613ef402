package core

import (
	"context"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
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

type listFilter struct {
	Phase, SupplierID, ProjectID, ContractType string
	Search                                     string
	SupplierMatches                            []string // suppliers whose name matches Search
}

func (s *store) list(ctx context.Context, sc workflowdesigner.Scope, f listFilter, req paging.Request) ([]Contract, int64, error) {
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
	return db.PageOf[Contract](q, req)
}

// inbox lists the contracts waiting in a phase the caller's roles see,
// most urgent first; Admin's inbox holds every contract that has a deadline.
func (s *store) inbox(ctx context.Context, sc workflowdesigner.Scope, req paging.Request) ([]Contract, int64, error) {
	cond, args := sc.Inbox()
	q := s.live(ctx).Where(cond, args...)
	req.Sort = []paging.Order{{Column: "contracts.sla_deadline"}}
	return db.PageOf[Contract](q, req)
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

func (s *store) insert(ctx context.Context, v any) error { return s.conn(ctx).Create(v).Error }

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
