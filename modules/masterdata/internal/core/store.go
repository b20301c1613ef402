package core

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/search"
)

// store is the only code that touches the master-data tables; one generic
// store serves the three of them.
type store[T any, PT entity[T]] struct {
	db      *db.DB
	table   string
	indexed bool // a trigram search index serves the table (SQLite with FTS5)
}

// live starts a query on the rows that are not deleted.
func (s store[T, PT]) live(ctx context.Context) *gorm.DB {
	return s.db.Conn(ctx).Model(new(T)).Where("deleted_at IS NULL")
}

func (s store[T, PT]) byID(ctx context.Context, id string) (*T, error) {
	t := new(T)
	if err := s.live(ctx).Where("id = ?", id).Take(t).Error; err != nil {
		return nil, err
	}
	PT(t).record().utc()
	return t, nil
}

// list returns one page and the total. The total is counted only when the
// page cannot tell it: a short page (or an empty first page) is the end.
func (s store[T, PT]) list(ctx context.Context, q listQuery) ([]T, int64, error) {
	tx := s.live(ctx)
	for _, c := range q.Where {
		tx = tx.Where(clause.Eq{Column: clause.Column{Name: c.Column}, Value: c.Value})
	}
	for _, w := range q.Words {
		tx = search.Match(tx, s.table, s.indexed, w)
	}
	tx = tx.Session(&gorm.Session{}) // reusable for the page and the count
	var rows []T
	if err := db.Page(tx, q.Request).Find(&rows).Error; err != nil {
		return nil, 0, err
	}
	for i := range rows {
		PT(&rows[i]).record().utc()
	}
	total := int64(q.Offset() + len(rows))
	if len(rows) == q.PageSize || (len(rows) == 0 && q.Offset() > 0) {
		if err := tx.Count(&total).Error; err != nil {
			return nil, 0, err
		}
	}
	return rows, total, nil
}

func (s store[T, PT]) insert(ctx context.Context, t *T) error {
	return s.db.Conn(ctx).Create(t).Error
}

// insertMany inserts rows, skipping any whose code a live row has, even one
// inserted meanwhile (another node seeding at the same moment).
func (s store[T, PT]) insertMany(ctx context.Context, rows []T) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	res := s.db.Conn(ctx).Clauses(clause.OnConflict{
		Columns:     []clause.Column{{Name: "code"}},
		TargetWhere: clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "deleted_at IS NULL"}}},
		DoNothing:   true,
	}).Create(&rows)
	return int(res.RowsAffected), res.Error
}

// update writes every column but the identity, creation and deletion ones,
// provided the row is live and still at version; it reports whether it was.
func (s store[T, PT]) update(ctx context.Context, t PT, version int) (bool, error) {
	res := s.db.Conn(ctx).Model(t).Where("version = ? AND deleted_at IS NULL", version).
		Select("*").Omit("id", "created_at", "created_by", "deleted_at", "deleted_by").Updates(t)
	return res.RowsAffected == 1, res.Error
}

// softDelete marks a live row deleted and reports whether it was live.
func (s store[T, PT]) softDelete(ctx context.Context, id string, by *string, at time.Time) (bool, error) {
	res := s.live(ctx).Where("id = ?", id).Updates(map[string]any{"deleted_at": at, "deleted_by": by})
	return res.RowsAffected == 1, res.Error
}

// refs resolves live rows by id in one query per 500 ids; unknown and
// deleted ids are left out. Inside a transaction on Postgres the rows are
// share-locked until it ends, so a delete waits for the caller to commit
// and its in-use check then sees what the caller wrote (SQLite has a
// single writer, which serialises the two anyway).
func (s store[T, PT]) refs(ctx context.Context, ids []string) (map[string]Ref, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	out := make(map[string]Ref, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		q := s.live(ctx).Select("id", "code", "name", "is_active").Where("id IN ?", chunk)
		if s.db.Dialect() == db.Postgres && db.InTransaction(ctx) {
			q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthShare})
		}
		var rows []Ref
		if err := q.Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.ID] = r
		}
	}
	return out, nil
}

// search returns the ids of up to limit live rows matching every word, the
// way list search matches.
func (s store[T, PT]) search(ctx context.Context, words []string, limit int) ([]string, error) {
	if len(words) == 0 {
		return nil, nil
	}
	tx := s.live(ctx)
	for _, w := range words {
		tx = search.Match(tx, s.table, s.indexed, w)
	}
	var ids []string
	err := tx.Order("id").Limit(limit).Pluck("id", &ids).Error
	return ids, err
}

// deletedCodes reports which of codes a deleted row has (the partial index
// over deleted rows serves it).
func (s store[T, PT]) deletedCodes(ctx context.Context, codes []string) (map[string]bool, error) {
	var found []string
	if err := s.db.Conn(ctx).Model(new(T)).Where("deleted_at IS NOT NULL AND code IN ?", codes).Pluck("code", &found).Error; err != nil {
		return nil, err
	}
	used := make(map[string]bool, len(found))
	for _, c := range found {
		used[c] = true
	}
	return used, nil
}
