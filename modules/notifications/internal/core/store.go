package core

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
)

// store is the only code that touches the notification tables: a
// notification is a message (notification_messages) and a recipient row
// per user it is for (notification_recipients); its id is the message's.
type store struct{ db *db.DB }

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

// exec runs a write below GORM, on the transaction in ctx: the fan-out of a
// move is two statements whatever the number of recipients, and the ORM's
// per-statement work is most of the cost of statements this small.
// Placeholders are $1…$n, numbered in order of first use (both engines
// read them so).
func (s *store) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.conn(ctx).Statement.ConnPool.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// jsonElements is the SQL that turns a JSON array of strings in $3 into rows
// of one column named value.
func (s *store) jsonElements() string {
	if s.db.Dialect() == db.Postgres {
		return `json_array_elements_text($3::json) AS j(value)`
	}
	return `json_each($3)`
}

// insert stores one message and its recipient rows: two statements, the
// users travelling as one JSON array.
func (s *store) insert(ctx context.Context, m Message, users []string) error {
	if _, err := s.exec(ctx, `INSERT INTO notification_messages (id, kind, title, body, entity_type, entity_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, m.ID, m.Kind, m.Title, m.Body, m.EntityType, m.EntityID, m.CreatedAt); err != nil {
		return err
	}
	list, err := json.Marshal(users)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO notification_recipients (user_id, created_at, message_id)
		SELECT value, $1, $2 FROM `+s.jsonElements(), m.CreatedAt, m.ID, string(list))
	return err
}

// columns are a notification as a recipient row joined to its message.
const columns = `SELECT m.id, r.user_id, m.kind, m.title, m.body, m.entity_type, m.entity_id, r.read_at, r.created_at
	FROM notification_recipients r JOIN notification_messages m ON m.id = r.message_id`

func unreadOnlyCond(unreadOnly bool) string {
	if unreadOnly {
		return " AND r.read_at IS NULL"
	}
	return ""
}

func (s *store) count(ctx context.Context, userID string, unreadOnly bool) (int64, error) {
	var n int64
	err := s.conn(ctx).Raw(`SELECT COUNT(*) FROM notification_recipients r WHERE r.user_id = ?`+unreadOnlyCond(unreadOnly), userID).
		Scan(&n).Error
	return n, err
}

func (s *store) list(ctx context.Context, userID string, unreadOnly bool, req paging.Request) ([]Notification, int64, error) {
	total, err := s.count(ctx, userID, unreadOnly)
	if err != nil || total == 0 {
		return []Notification{}, total, err
	}
	// createdAt is the only sort; the message id breaks ties the same way.
	dir := ""
	if len(req.Sort) > 0 && req.Sort[0].Desc {
		dir = " DESC"
	}
	rows := []Notification{}
	err = s.conn(ctx).Raw(columns+` WHERE r.user_id = ?`+unreadOnlyCond(unreadOnly)+
		` ORDER BY r.created_at`+dir+`, r.message_id`+dir+` LIMIT ? OFFSET ?`, userID, req.PageSize, req.Offset()).
		Scan(&rows).Error
	return rows, total, err
}

func (s *store) unread(ctx context.Context, userID string) (int64, error) {
	return s.count(ctx, userID, true)
}

func (s *store) get(ctx context.Context, userID, id string) (*Notification, error) {
	var rows []Notification
	err := s.conn(ctx).Raw(columns+` WHERE r.user_id = ? AND r.created_at = m.created_at AND m.id = ?`, userID, id).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, gorm.ErrRecordNotFound
	}
	return &rows[0], nil
}

// markRead marks the user's unread notifications read: one, or all when id
// is empty. It returns how many changed.
func (s *store) markRead(ctx context.Context, userID, id string, at time.Time) (int64, error) {
	if id == "" {
		return s.exec(ctx, `UPDATE notification_recipients SET read_at = $1 WHERE user_id = $2 AND read_at IS NULL`, at, userID)
	}
	// The message's time completes the recipient row's key.
	return s.exec(ctx, `UPDATE notification_recipients SET read_at = $1
		WHERE user_id = $2 AND created_at = (SELECT created_at FROM notification_messages WHERE id = $3) AND message_id = $3
		AND read_at IS NULL`, at, userID, id)
}

// messages reads messages by id, a chunk of ids per query, as unread
// notifications of no one (the caller names the owner).
func (s *store) messages(ctx context.Context, ids []string) (map[string]Notification, error) {
	out := make(map[string]Notification, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		var rows []Notification
		if err := s.conn(ctx).Raw(`SELECT id, kind, title, body, entity_type, entity_id, created_at FROM notification_messages WHERE id IN ?`,
			chunk).Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.ID] = r
		}
	}
	return out, nil
}

// newest is the latest notification of the user, nil when there is none.
func (s *store) newest(ctx context.Context, userID string) (*Notification, error) {
	var rows []Notification
	err := s.conn(ctx).Raw(columns+` WHERE r.user_id = ? ORDER BY r.created_at DESC, r.message_id DESC LIMIT 1`, userID).Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// since reads the notifications of users created at or after from, oldest
// first, at most limit of them.
func (s *store) since(ctx context.Context, userIDs []string, from time.Time, limit int) ([]Notification, error) {
	var rows []Notification
	err := s.conn(ctx).Raw(columns+` WHERE r.user_id IN ? AND r.created_at >= ? ORDER BY r.created_at, r.message_id LIMIT ?`,
		userIDs, from, limit).Scan(&rows).Error
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

// purge deletes notifications created before cutoff (recipient rows, then
// the messages) and tickets expired before now. The recipients' delete
// scans their table: an hourly job does not earn an index that every
// fan-out would pay for.
func (s *store) purge(ctx context.Context, cutoff, now time.Time) (int64, error) {
	var n int64
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		var err error
		if n, err = s.exec(ctx, `DELETE FROM notification_recipients WHERE created_at < $1`, cutoff); err != nil {
			return err
		}
		_, err = s.exec(ctx, `DELETE FROM notification_messages WHERE created_at < $1`, cutoff)
		return err
	})
	if err != nil {
		return 0, err
	}
	err = s.conn(ctx).Where("expires_at < ?", now).Delete(&Ticket{}).Error
	return n, err
}
