package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
)

// store is the only code that touches the notification tables. A
// notification is a message (notification_messages), for the members of
// its audience but the one it leaves out, and for the users of its
// recipient rows; its id is the message's. A read mark is a row of
// notification_reads.
type store struct {
	db        *db.DB
	audiences audiences
}

// audiences remembers audiences this node stored or read: an audience's
// members never change (its id is their hash) and its rows are never
// deleted, so a fan-out to people already an audience writes only its
// message, and the news of a message names its audience, which each node
// resolves once.
type audiences struct {
	mu      sync.Mutex
	members map[string][]string // committed audience id → its sorted members
	byRoles map[string]audience // roles of a fan-out → the audience they last made
}

type audience struct {
	id    string
	users []string
}

// maxAudiences bounds what a node remembers: audiences are few (one per
// set of role holders), but every change of a role's holders makes one.
const maxAudiences = 256

func (a *audiences) lookup(id string) ([]string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.members[id]
	return m, ok
}

func (a *audiences) remember(id string, users []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.members == nil || len(a.members) >= maxAudiences {
		a.members = map[string][]string{}
	}
	a.members[id] = users
}

// idOf is the id of users, the holders of roles: hashed again only when
// the holders differ from the last time (a move's fan-out hashed 6 KB of
// ids for the same audience every time).
func (a *audiences) idOf(roles, users []string) string {
	key := strings.Join(roles, "\x00")
	a.mu.Lock()
	last, ok := a.byRoles[key]
	a.mu.Unlock()
	if ok && slices.Equal(last.users, users) {
		return last.id
	}
	id := audienceID(users)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byRoles == nil || len(a.byRoles) >= maxAudiences {
		a.byRoles = map[string]audience{}
	}
	a.byRoles[key] = audience{id: id, users: users}
	return id
}

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

// exec runs a write below GORM, on the transaction in ctx: the fan-out of a
// move is one or two statements, and the ORM's per-statement work is most
// of the cost of statements this small. Placeholders are $1…$n, numbered in
// order of first use (both engines read them so).
func (s *store) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.conn(ctx).Statement.ConnPool.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// jsonElements is the SQL that turns the JSON array of strings in
// placeholder p into rows of one column named value.
func (s *store) jsonElements(p string) string {
	if s.db.Dialect() == db.Postgres {
		return `json_array_elements_text(` + p + `::json) AS j(value)`
	}
	return `json_each(` + p + `)`
}

// audienceID names a set of users: the hash of their sorted ids.
// The ids are NUL-terminated into one buffer and hashed at once: a write
// per id cost three times the hashing on a move's hot path.
func audienceID(sorted []string) string {
	n := len(sorted)
	for _, u := range sorted {
		n += len(u)
	}
	b := make([]byte, 0, n)
	for _, u := range sorted {
		b = append(append(b, u...), 0)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// audience stores users, the sorted distinct holders of roles, as an
// audience unless it is stored already, and returns its id. users must not
// change afterwards: they are remembered.
func (s *store) audience(ctx context.Context, roles, users []string) (string, error) {
	id := s.audiences.idOf(roles, users)
	if _, ok := s.audiences.lookup(id); ok {
		return id, nil
	}
	list, err := json.Marshal(users)
	if err != nil {
		return "", err
	}
	if _, err := s.exec(ctx, `INSERT INTO notification_audiences (audience_id, user_id)
		SELECT $1, value FROM `+s.jsonElements("$2")+` WHERE true ON CONFLICT DO NOTHING`, id, string(list)); err != nil {
		return "", err
	}
	db.AfterCommit(ctx, func() { s.audiences.remember(id, users) })
	return id, nil
}

// members lists an audience's members, sorted: remembered, or read once.
func (s *store) members(ctx context.Context, id string) ([]string, error) {
	if m, ok := s.audiences.lookup(id); ok {
		return m, nil
	}
	var users []string
	if err := s.conn(ctx).Raw(`SELECT user_id FROM notification_audiences WHERE audience_id = ?`, id).Scan(&users).Error; err != nil {
		return nil, err
	}
	slices.Sort(users) // in Go's order, whatever the database's collation
	s.audiences.remember(id, users)
	return users, nil
}

// insert stores one message for the members of audience (its id, "" for
// none) but except, and for users: on Postgres one statement, which nobody
// reads before the publisher's transaction commits, so it goes out with
// COMMIT (db.ExecAtCommit: no round trip of its own); on SQLite one for the
// message and one for the users' recipient rows when there are any.
func (s *store) insert(ctx context.Context, m Message, users []string) error {
	const message = `INSERT INTO notification_messages (id, kind, title, body, entity_type, entity_id, audience_id, except_user_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
	args := []any{m.ID, m.Kind, m.Title, m.Body, m.EntityType, m.EntityID, nullable(m.AudienceID), nullable(m.ExceptUserID), m.CreatedAt}
	if len(users) == 0 {
		return s.db.ExecAtCommit(ctx, message, args...)
	}
	list, err := json.Marshal(users)
	if err != nil {
		return err
	}
	recipients := func(at, id, users string) string {
		return `INSERT INTO notification_recipients (user_id, created_at, message_id) SELECT value, ` + at + `, ` + id +
			` FROM ` + s.jsonElements(users)
	}
	if s.db.Dialect() == db.Postgres {
		return s.db.ExecAtCommit(ctx, `WITH message AS (`+message+`) `+recipients("$9", "$1", "$10"), append(args, string(list))...)
	}
	if _, err := s.exec(ctx, message, args...); err != nil {
		return err
	}
	// SQLite numbers $-parameters in the order they appear.
	_, err = s.exec(ctx, recipients("$1", "$2", "$3"), m.CreatedAt, m.ID, string(list))
	return err
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// own is every notification of user u with its read mark: the messages of
// the audiences u is in that do not leave u out, and those of u's
// recipient rows. Its ? placeholders take ownArgs(u).
const own = `SELECT m.id, m.kind, m.title, m.body, m.entity_type, m.entity_id, rd.read_at, m.created_at
	FROM notification_messages m
	LEFT JOIN notification_reads rd ON rd.user_id = ? AND rd.message_id = m.id
	WHERE ((m.audience_id IN (SELECT a.audience_id FROM notification_audiences a WHERE a.user_id = ?)
			AND (m.except_user_id IS NULL OR m.except_user_id <> ?))
		OR m.id IN (SELECT r.message_id FROM notification_recipients r WHERE r.user_id = ?))`

func ownArgs(u string, more ...any) []any { return append([]any{u, u, u, u}, more...) }

func unreadOnlyCond(unreadOnly bool) string {
	if unreadOnly {
		return " AND rd.read_at IS NULL"
	}
	return ""
}

// owned reads u's notifications matching cond (after own's WHERE) and
// names u their owner.
func (s *store) owned(ctx context.Context, u, cond string, args ...any) ([]Notification, error) {
	rows := []Notification{}
	if err := s.conn(ctx).Raw(own+cond, ownArgs(u, args...)...).Scan(&rows).Error; err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].UserID = u
	}
	return rows, nil
}

func (s *store) count(ctx context.Context, userID string, unreadOnly bool) (int64, error) {
	var n int64
	err := s.conn(ctx).Raw(`SELECT COUNT(*) FROM (`+own+unreadOnlyCond(unreadOnly)+`) AS n`, ownArgs(userID)...).Scan(&n).Error
	return n, err
}

func (s *store) list(ctx context.Context, userID string, unreadOnly bool, req paging.Request) ([]Notification, int64, error) {
	total, err := s.count(ctx, userID, unreadOnly)
	if err != nil || total == 0 {
		return []Notification{}, total, err
	}
	// createdAt is the only sort; the id breaks ties the same way.
	dir := ""
	if len(req.Sort) > 0 && req.Sort[0].Desc {
		dir = " DESC"
	}
	rows, err := s.owned(ctx, userID, unreadOnlyCond(unreadOnly)+` ORDER BY m.created_at`+dir+`, m.id`+dir+` LIMIT ? OFFSET ?`,
		req.PageSize, req.Offset())
	return rows, total, err
}

func (s *store) unread(ctx context.Context, userID string) (int64, error) {
	return s.count(ctx, userID, true)
}

func (s *store) get(ctx context.Context, userID, id string) (*Notification, error) {
	rows, err := s.owned(ctx, userID, ` AND m.id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, gorm.ErrRecordNotFound
	}
	return &rows[0], nil
}

// markRead marks the user's unread notifications read: one, or all when id
// is empty, with a read mark each. It returns how many changed.
func (s *store) markRead(ctx context.Context, userID, id string, at time.Time) (int64, error) {
	cond, args := ` AND rd.read_at IS NULL`, []any{userID, at}
	args = append(args, ownArgs(userID)...)
	if id != "" {
		cond += ` AND m.id = ?`
		args = append(args, id)
	}
	// Postgres needs the types of the two values the SELECT list takes;
	// SQLite would turn a TIMESTAMP cast of a time into a number.
	when := `?`
	if s.db.Dialect() == db.Postgres {
		when = `CAST(? AS TIMESTAMP)`
	}
	res := s.conn(ctx).Exec(`INSERT INTO notification_reads (user_id, message_id, read_at, created_at)
		SELECT CAST(? AS VARCHAR(36)), v.id, `+when+`, v.created_at FROM (`+own+cond+`) AS v WHERE true ON CONFLICT DO NOTHING`, args...)
	return res.RowsAffected, res.Error
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

// recent reads the user's notifications of the window before their newest
// one, newest first, at most limit of them.
func (s *store) recent(ctx context.Context, userID string, window time.Duration, limit int) ([]Notification, error) {
	rows, err := s.owned(ctx, userID, ` ORDER BY m.created_at DESC, m.id DESC LIMIT 1`)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return s.owned(ctx, userID, ` AND m.created_at >= ? ORDER BY m.created_at DESC, m.id DESC LIMIT ?`,
		rows[0].CreatedAt.Add(-window), limit)
}

// since reads the notifications of a user created at or after from, oldest
// first, at most limit of them.
func (s *store) since(ctx context.Context, userID string, from time.Time, limit int) ([]Notification, error) {
	return s.owned(ctx, userID, ` AND m.created_at >= ? ORDER BY m.created_at, m.id LIMIT ?`, from, limit)
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

// purge deletes notifications created before cutoff (their recipient
// rows and read marks, then the messages) and tickets expired before now.
// Recipient rows and marks are deleted with a scan: an hourly job does not
// earn an index that every fan-out would pay for. Audiences stay: they are
// few, and a node may know one as stored.
func (s *store) purge(ctx context.Context, cutoff, now time.Time) (int64, error) {
	var n int64
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		for _, t := range []string{"notification_recipients", "notification_reads"} {
			if _, err := s.exec(ctx, `DELETE FROM `+t+` WHERE created_at < $1`, cutoff); err != nil {
				return err
			}
		}
		var err error
		n, err = s.exec(ctx, `DELETE FROM notification_messages WHERE created_at < $1`, cutoff)
		return err
	})
	if err != nil {
		return 0, err
	}
	err = s.conn(ctx).Where("expires_at < ?", now).Delete(&Ticket{}).Error
	return n, err
}
