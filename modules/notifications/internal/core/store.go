package core

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
)

// store is the only code that touches the notification tables.
type store struct{ db *db.DB }

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

// insertBatch bounds one INSERT: 1000 rows of 9 columns stay under
// SQLite's parameter limit, and a role held by 500 users is one statement.
const insertBatch = 1000

func (s *store) insert(ctx context.Context, rows []Notification) error {
	return s.conn(ctx).CreateInBatches(rows, insertBatch).Error
}

func (s *store) own(ctx context.Context, userID string, unreadOnly bool) *gorm.DB {
	q := s.conn(ctx).Model(&Notification{}).Where("user_id = ?", userID)
	if unreadOnly {
		q = q.Where("read_at IS NULL")
	}
	return q
}

func (s *store) list(ctx context.Context, userID string, unreadOnly bool, req paging.Request) ([]Notification, int64, error) {
	var total int64
	if err := s.own(ctx, userID, unreadOnly).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var rows []Notification
	if total == 0 {
		return rows, 0, nil
	}
	err := db.Page(s.own(ctx, userID, unreadOnly), req).Find(&rows).Error
	return rows, total, err
}

func (s *store) unread(ctx context.Context, userID string) (int64, error) {
	var n int64
	err := s.own(ctx, userID, true).Count(&n).Error
	return n, err
}

func (s *store) get(ctx context.Context, userID, id string) (*Notification, error) {
	var n Notification
	if err := s.own(ctx, userID, false).Where("id = ?", id).Take(&n).Error; err != nil {
		return nil, err
	}
	return &n, nil
}

// markRead marks the user's unread notifications read: one, or all when id
// is empty. It returns how many changed.
func (s *store) markRead(ctx context.Context, userID, id string, at time.Time) (int64, error) {
	q := s.own(ctx, userID, true)
	if id != "" {
		q = q.Where("id = ?", id)
	}
	res := q.Update("read_at", at)
	return res.RowsAffected, res.Error
}

// byIDs reads notifications by id, a chunk of ids per query.
func (s *store) byIDs(ctx context.Context, ids []string) ([]Notification, error) {
	var out []Notification
	for chunk := range slices.Chunk(ids, 500) {
		var rows []Notification
		if err := s.conn(ctx).Where("id IN ?", chunk).Order("created_at, id").Find(&rows).Error; err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// newest is the latest notification of the user, nil when there is none.
func (s *store) newest(ctx context.Context, userID string) (*Notification, error) {
	var rows []Notification
	if err := s.own(ctx, userID, false).Order("created_at DESC, id DESC").Limit(1).Find(&rows).Error; err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// since reads the notifications of users created at or after from, oldest
// first, at most limit of them.
func (s *store) since(ctx context.Context, userIDs []string, from time.Time, limit int) ([]Notification, error) {
	var rows []Notification
	err := s.conn(ctx).Where("user_id IN ? AND created_at >= ?", userIDs, from).Order("created_at, id").Limit(limit).Find(&rows).Error
	return rows, err
}

func (s *store) insertTicket(ctx context.Context, t Ticket) error {
	return s.conn(ctx).Create(&t).Error
}

// takeTicket deletes the ticket with hash and returns it: of two nodes
// redeeming one ticket at once, one gets it. Nil when there is none.
func (s *store) takeTicket(ctx context.Context, hash string) (*Ticket, error) {
	var rows []Ticket
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		return s.conn(ctx).Raw(`DELETE FROM notification_tickets WHERE hash = ? RETURNING hash, user_id, stamp, expires_at`, hash).
			Scan(&rows).Error
	})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// purge deletes notifications created before cutoff and tickets expired
// before now.
func (s *store) purge(ctx context.Context, cutoff, now time.Time) (int64, error) {
	res := s.conn(ctx).Where("created_at < ?", cutoff).Delete(&Notification{})
	if res.Error != nil {
		return 0, res.Error
	}
	err := s.conn(ctx).Where("expires_at < ?", now).Delete(&Ticket{}).Error
	return res.RowsAffected, err
}
