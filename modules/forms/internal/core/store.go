package core

import (
	"context"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
)

// store is the only code that touches contract_templates.
type store struct {
	db *db.DB
}

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

func (s *store) byID(ctx context.Context, id string) (*Template, error) {
	var t Template
	if err := s.conn(ctx).Where("id = ?", id).Take(&t).Error; err != nil {
		return nil, err
	}
	return &t, nil
}

func (s *store) formCodeTaken(ctx context.Context, code, exceptID string) (bool, error) {
	var n int64
	err := s.conn(ctx).Model(&Template{}).Where("form_code = ? AND id <> ?", code, exceptID).Count(&n).Error
	return n > 0, err
}

func (s *store) formCodes(ctx context.Context) (map[string]bool, error) {
	var codes []string
	if err := s.conn(ctx).Model(&Template{}).Pluck("form_code", &codes).Error; err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(codes))
	for _, c := range codes {
		out[c] = true
	}
	return out, nil
}

type filter struct {
	Search       string
	ContractType string
	OnlyActive   bool // rows switched on; whether their file exists is the service's concern
}

func (s *store) filtered(ctx context.Context, f filter) *gorm.DB {
	q := s.conn(ctx).Model(&Template{})
	if f.Search != "" {
		like := db.Contains(strings.ToLower(f.Search))
		q = q.Where("(LOWER(form_code) LIKE ? "+db.LikeEscape+" OR LOWER(name) LIKE ? "+db.LikeEscape+")", like, like)
	}
	if f.ContractType != "" {
		q = q.Where("contract_type = ?", f.ContractType)
	}
	if f.OnlyActive {
		q = q.Where("is_active = ?", true)
	}
	return q
}

// page returns one page of matching rows and the number of all of them.
func (s *store) page(ctx context.Context, f filter, req paging.Request) ([]Template, int64, error) {
	var total int64
	if err := s.filtered(ctx, f).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var rows []Template
	err := db.Page(s.filtered(ctx, f), req).Find(&rows).Error
	return rows, total, err
}

// all returns every matching row in the request's order.
func (s *store) all(ctx context.Context, f filter, req paging.Request) ([]Template, error) {
	q := s.filtered(ctx, f)
	for _, o := range req.Sort {
		q = q.Order(clause.OrderByColumn{Column: clause.Column{Name: o.Column}, Desc: o.Desc})
	}
	var rows []Template
	err := q.Order("id").Find(&rows).Error
	return rows, err
}

func (s *store) insert(ctx context.Context, t *Template) error {
	return s.conn(ctx).Create(t).Error
}

// insertIfMissing inserts t unless its form code exists (a concurrent seed
// on another node); it reports whether the row was inserted.
func (s *store) insertIfMissing(ctx context.Context, t *Template) (bool, error) {
	res := s.conn(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "form_code"}}, DoNothing: true}).Create(t)
	return res.RowsAffected == 1, res.Error
}

// update writes exactly the given columns and bumps the version; with
// version set it is a compare-and-set and reports false when the row has
// moved on.
func (s *store) update(ctx context.Context, id string, version *int, cols map[string]any) (bool, error) {
	cols["version"] = gorm.Expr("version + 1")
	q := s.conn(ctx).Model(&Template{}).Where("id = ?", id)
	if version != nil {
		q = q.Where("version = ?", *version)
	}
	res := q.Updates(cols)
	return res.RowsAffected == 1, res.Error
}
