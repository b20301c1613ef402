// Package core implements the notifications module: notifications stored
// with the change they report, read and marked by their owner, and pushed
// to the owner's WebSockets on every node through platform/notify.
package core

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/notify"
	"github.com/contractflow/contractflow/platform/paging"
)

// Config is the notifications section of the configuration.
type Config struct {
	// RetentionDays is how long a notification is kept (read or not).
	RetentionDays int `mapstructure:"retentionDays"`
}

// DefaultConfig holds the documented defaults.
func DefaultConfig() *Config { return &Config{RetentionDays: 90} }

// Validate checks the section.
func (c *Config) Validate() error {
	if c.RetentionDays < 1 {
		return fmt.Errorf("config key notifications.retentionDays: must be at least 1")
	}
	return nil
}

// TicketTTL is how long a WebSocket ticket may wait to be used (DESIGN §10).
const TicketTTL = 30 * time.Second

// Deps are what the service uses.
type Deps struct {
	DB             *db.DB
	Clock          clock.Clock
	Log            *slog.Logger
	Hub            *notify.Hub
	Directory      identity.Directory
	Sessions       identity.Sessions
	Config         Config
	AllowedOrigins []string
}

// Service holds the module's behaviour.
type Service struct {
	Deps
	store   *store
	sockets *sockets
}

// New returns the service.
func New(d Deps) *Service {
	s := &Service{Deps: d, store: &store{db: d.DB}}
	s.sockets = newSockets(s)
	return s
}

// now is the service's clock, truncated to what both databases keep.
func (s *Service) now() time.Time { return s.Clock.Now().UTC().Truncate(time.Microsecond) }

func notFound() *apperr.Error { return apperr.NotFound("Notification") }

// Store is the InTx subscriber to every event: an event that implements
// notify.Notifiable has each draft stored as one message in the
// publisher's transaction — for the audience of the active users holding
// its roles (stored once per distinct set of users) but the actor, and for
// the users it names besides with a small recipient row each — and
// announced to every node once that transaction commits.
func (s *Service) Store(ctx context.Context, e events.Event) error {
	n, ok := e.(notify.Notifiable)
	if !ok {
		return nil
	}
	drafts := n.Notifications()
	if len(drafts) == 0 {
		return nil
	}
	now := s.now()
	var items []notify.Item
	for _, d := range drafts {
		m := Message{ID: uuid.Must(uuid.NewV7()).String(), Kind: d.Kind, Title: d.Title, Body: d.Body,
			EntityType: d.EntityType, EntityID: d.EntityID, CreatedAt: now}
		var holders []string
		if len(d.Roles) > 0 {
			var err error
			if holders, err = s.Directory.UserIDsInRoles(s.holdersCtx(ctx), d.Roles); err != nil {
				return fmt.Errorf("notify %s: users in roles %v: %w", d.Kind, d.Roles, err)
			}
			holders = distinct(holders)
		}
		// Named users outside the audience get a recipient row each.
		var named []string
		for _, u := range distinct(slices.Clone(d.UserIDs)) {
			if _, in := slices.BinarySearch(holders, u); !in && u != d.ExceptUserID {
				named = append(named, u)
			}
		}
		told := len(holders)
		if _, in := slices.BinarySearch(holders, d.ExceptUserID); in {
			told--
		}
		if told == 0 && len(named) == 0 {
			continue
		}
		if told > 0 {
			var err error
			if m.AudienceID, err = s.store.audience(ctx, d.Roles, holders); err != nil {
				return fmt.Errorf("store the audience of %s: %w", d.Kind, err)
			}
			if told < len(holders) {
				m.ExceptUserID = d.ExceptUserID
			}
		}
		if err := s.store.insert(ctx, m, named); err != nil {
			return fmt.Errorf("store notification %s of %s: %w", d.Kind, e.Topic(), err)
		}
		items = append(items, notify.Item{ID: m.ID, Audience: m.AudienceID, Except: m.ExceptUserID, UserIDs: named})
	}
	return s.Hub.Announce(ctx, items)
}

// holdersCtx is the context the role holders of a fan-out are read in. On
// SQLite it is detached from the publisher's transaction: that transaction
// holds the one write lock, so nothing commits while it runs and the last
// committed state a reader sees is the transaction's own view, but for its
// own writes — and no publisher of a Notifiable event writes users or
// roles. Read so, the holders come from identity's cache, which never
// stores what a transaction read. On Postgres the read stays in the
// transaction: a second connection per move could exhaust the pool.
func (s *Service) holdersCtx(ctx context.Context) context.Context {
	if s.DB.Dialect() == db.SQLite {
		return db.WithoutTx(ctx)
	}
	return ctx
}

// distinct sorts ids and drops duplicates and empty ones.
func distinct(ids []string) []string {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > 0 && ids[0] == "" {
		ids = ids[1:]
	}
	return ids
}

// ListSpec pages a user's notifications, newest first by default.
var ListSpec = paging.Spec{Sort: map[string]string{"createdAt": "created_at"}, DefaultSort: "-createdAt"}

// List returns a page of the user's notifications.
func (s *Service) List(ctx context.Context, userID string, unreadOnly bool, req paging.Request) (paging.Page[DTO], error) {
	rows, total, err := s.store.list(ctx, userID, unreadOnly, req)
	if err != nil {
		return paging.Page[DTO]{}, err
	}
	out := make([]DTO, len(rows))
	for i, r := range rows {
		out[i] = toDTO(r)
	}
	return paging.NewPage(out, req, total), nil
}

// UnreadCount counts the user's unread notifications.
func (s *Service) UnreadCount(ctx context.Context, userID string) (Count, error) {
	n, err := s.store.unread(ctx, userID)
	return Count{Count: n}, err
}

// MarkRead marks one of the user's notifications read (again: no change)
// and returns it; another user's notification is unknown (404).
func (s *Service) MarkRead(ctx context.Context, userID, id string) (DTO, error) {
	if _, err := uuid.Parse(id); err != nil {
		return DTO{}, notFound()
	}
	if _, err := s.store.markRead(ctx, userID, id, s.now()); err != nil {
		return DTO{}, err
	}
	n, err := s.store.get(ctx, userID, id)
	if db.IsNotFound(err) {
		return DTO{}, notFound()
	}
	if err != nil {
		return DTO{}, err
	}
	return toDTO(*n), nil
}

// MarkAllRead marks every unread notification of the user read.
func (s *Service) MarkAllRead(ctx context.Context, userID string) (Updated, error) {
	n, err := s.store.markRead(ctx, userID, "", s.now())
	return Updated{Updated: n}, err
}

// NewTicket issues a one-time WebSocket ticket bound to the user and their
// current security stamp, valid for TicketTTL. Only its hash is stored.
func (s *Service) NewTicket(ctx context.Context, userID string) (TicketDTO, error) {
	stamps, err := s.Sessions.ActiveStamps(ctx, []string{userID})
	if err != nil {
		return TicketDTO{}, err
	}
	stamp, ok := stamps[userID]
	if !ok {
		return TicketDTO{}, ticketRefused()
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	ticket := base64.RawURLEncoding.EncodeToString(raw)
	exp := s.now().Add(TicketTTL)
	if err := s.store.insertTicket(ctx, Ticket{Hash: hashTicket(ticket), UserID: userID, Stamp: stamp, ExpiresAt: exp}); err != nil {
		return TicketDTO{}, err
	}
	return TicketDTO{Ticket: ticket, ExpiresAt: exp}, nil
}

func hashTicket(t string) string {
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:])
}

func ticketRefused() *apperr.Error {
	return apperr.Unauthorized("token_invalid", "The ticket is unknown, used or expired; ask POST /api/notifications/ws-ticket for a new one.")
}

// redeem consumes a ticket: it works once, before it expires, while its
// user is active with the stamp it was issued under.
func (s *Service) redeem(ctx context.Context, ticket string) (userID, stamp string, err error) {
	t, err := s.store.takeTicket(ctx, hashTicket(ticket))
	if err != nil {
		return "", "", err
	}
	if t == nil || !s.now().Before(t.ExpiresAt) {
		return "", "", ticketRefused()
	}
	stamps, err := s.Sessions.ActiveStamps(ctx, []string{t.UserID})
	if err != nil {
		return "", "", err
	}
	if stamps[t.UserID] != t.Stamp {
		return "", "", ticketRefused()
	}
	return t.UserID, t.Stamp, nil
}

// Purge deletes notifications older than notifications.retentionDays and
// expired tickets (the retention job).
func (s *Service) Purge(ctx context.Context) error {
	now := s.now()
	n, err := s.store.purge(ctx, now.AddDate(0, 0, -s.Config.RetentionDays), now)
	if err != nil {
		return fmt.Errorf("purge notifications: %w", err)
	}
	if n > 0 {
		s.Log.Info("notifications purged", "deleted", n, "retentionDays", s.Config.RetentionDays)
	}
	return nil
}
