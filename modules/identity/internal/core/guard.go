package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/authz"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
)

// Guard enforces access rules: a valid token of an active user whose
// security stamp still matches, and for policies, the permission matrix.
// Everything it needs per request is cached in memory; a change made on this
// node drops the cache entry after commit, and changes made on other nodes
// are picked up within identity.cacheSyncInterval.
type Guard struct{ svc *Service }

var _ httpx.Guard = Guard{}

// Guard returns the module's httpx.Guard.
func (s *Service) Guard() Guard { return Guard{svc: s} }

// Handler returns the middleware of one access rule. A policy must be
// "<menuKey>.<Read|Create|Update|Delete>"; anything else is a programming
// error reported when routes are mounted.
func (g Guard) Handler(a httpx.Access) fiber.Handler {
	if a.Policy != "" {
		menu, action, ok := strings.Cut(a.Policy, ".")
		if !ok || menu == "" || (action != authz.Read && action != authz.Create && action != authz.Update && action != authz.Delete) {
			panic(fmt.Sprintf("identity: malformed policy %q", a.Policy))
		}
	}
	s := g.svc
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		s.sync.maybe(ctx)
		p, err := s.authenticate(ctx, c.Get(fiber.HeaderAuthorization))
		if err != nil {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer`)
			return err
		}
		if a.Policy != "" && !s.enforcer.Allowed(p.Roles, a.Policy) {
			return apperr.Forbidden(fmt.Sprintf("You need the %s permission.", a.Policy))
		}
		c.SetUserContext(authn.WithPrincipal(ctx, p))
		return c.Next()
	}
}

func (s *Service) authenticate(ctx context.Context, header string) (authn.Principal, error) {
	// The scheme name is case-insensitive (RFC 9110 §11.1).
	scheme, raw, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return authn.Principal{}, tokenInvalid("Sign in and send the access token as Authorization: Bearer <token>.")
	}
	claims, err := s.tokens.Parse(strings.TrimSpace(raw))
	if errors.Is(err, authn.ErrExpired) {
		return authn.Principal{}, tokenInvalid("The access token has expired; refresh it.")
	}
	if err != nil {
		return authn.Principal{}, tokenInvalid("The access token is not valid.")
	}
	st, err := s.userState(ctx, claims.Subject)
	if db.IsNotFound(err) {
		return authn.Principal{}, tokenInvalid("The token's user no longer exists.")
	}
	if err != nil {
		return authn.Principal{}, err
	}
	if !st.active {
		return authn.Principal{}, tokenInvalid("The account is disabled.")
	}
	if st.stamp != claims.Stamp {
		return authn.Principal{}, tokenInvalid("The token was revoked; sign in again.")
	}
	return authn.Principal{UserID: claims.Subject, Email: st.email, Name: st.name, Roles: st.roles}, nil
}

// userState is what the guard needs of a user.
type userState struct {
	active      bool
	stamp       string
	email, name string
	roles       []string
}

// userState answers from the cache, loading a missing user (a NotFound
// error for an unknown one).
func (s *Service) userState(ctx context.Context, id string) (userState, error) {
	st, ok, gen := s.cache.Get(id)
	if ok {
		return st, nil
	}
	st, err := s.loadUserState(ctx, id)
	if err != nil {
		return st, err
	}
	if !db.InTransaction(ctx) {
		s.cache.Store(gen, map[string]userState{id: st})
	}
	return st, nil
}

func (s *Service) loadUserState(ctx context.Context, id string) (userState, error) {
	u, err := s.store.userByID(ctx, id)
	if err != nil {
		return userState{}, err
	}
	roles, err := s.store.rolesOf(ctx, []string{id})
	if err != nil {
		return userState{}, err
	}
	return userState{active: u.IsActive, stamp: u.SecurityStamp, email: u.Email, name: u.FullName, roles: roles[id]}, nil
}

// The guard's user states, the names and the role holders are
// platform/cache maps: a change drops its entries after commit on this node
// and through the cache bus on the others, and a load that raced with a drop
// is not stored.

// maxCachedUsers bounds each per-user map (the users table holds thousands).
const maxCachedUsers = 20_000

// usersChanged records a change of a user's name, security state, active
// flag or roles: other nodes see the counter move (and hear the cache bus);
// every node drops the user's entries, and every role's holders, once the
// change commits.
func (s *Service) usersChanged(ctx context.Context, userID string) error {
	if err := s.store.bump(ctx, "users_version"); err != nil {
		return err
	}
	if err := s.cache.Changed(ctx, userID); err != nil {
		return err
	}
	if err := s.names.Changed(ctx, userID); err != nil {
		return err
	}
	return s.holders.Changed(ctx)
}

// userCreated records new users: only the role holders can have changed
// (names are not cached for unknown ids). The counter moves too, so a
// server sharing a SQLite file with the process that created them (a CLI
// command) empties its maps within identity.cacheSyncInterval.
func (s *Service) userCreated(ctx context.Context) error {
	if err := s.store.bump(ctx, "users_version"); err != nil {
		return err
	}
	return s.holders.Changed(ctx)
}

// permissionsChanged records a change of the matrix; this node reloads its
// enforcer once the change commits.
func (s *Service) permissionsChanged(ctx context.Context) error {
	if err := s.store.bump(ctx, "permissions_version"); err != nil {
		return err
	}
	db.AfterCommit(ctx, func() {
		if err := s.loadPolicies(db.WithoutTx(context.WithoutCancel(ctx))); err != nil {
			s.log.Error("reload permissions", "err", err)
		}
	})
	return nil
}

// syncer compares the shared change counters with the ones this node last
// saw, at most once per interval, on the request path: one small query per
// interval, not per request, and no listener connection that can drop.
type syncer struct {
	svc      *Service
	interval time.Duration
	mu       sync.Mutex
	last     atomic.Int64 // unix nanos of the last check
	perms    int64
	users    int64
}

// prime records the current counters (at provision).
func (y *syncer) prime(ctx context.Context) error {
	st, err := y.svc.store.state(ctx)
	if err != nil {
		return err
	}
	y.perms, y.users = st.PermissionsVersion, st.UsersVersion
	y.last.Store(time.Now().UnixNano())
	return nil
}

func (y *syncer) maybe(ctx context.Context) {
	if time.Now().UnixNano()-y.last.Load() < int64(y.interval) {
		return
	}
	if !y.mu.TryLock() {
		return // another request is already checking
	}
	defer y.mu.Unlock()
	y.last.Store(time.Now().UnixNano())
	st, err := y.svc.store.state(ctx)
	if err != nil {
		y.svc.log.Warn("identity cache sync", "err", err)
		return
	}
	if st.UsersVersion != y.users {
		y.svc.cache.Drop()
		y.svc.names.Drop()
		y.svc.holders.Drop()
		y.users = st.UsersVersion
	}
	if st.PermissionsVersion != y.perms {
		if err := y.svc.loadPolicies(ctx); err != nil {
			y.svc.log.Warn("identity permission reload", "err", err)
			return
		}
		y.perms = st.PermissionsVersion
	}
}
