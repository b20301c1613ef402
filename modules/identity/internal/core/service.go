// Package core implements the identity module: accounts, roles, tokens,
// lockout and the permission matrix, and the guard that enforces it on
// every route of every module.
package core

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/authz"
	"github.com/contractflow/contractflow/platform/cache"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/paging"
)

// Service holds the module's behaviour; handlers and the guard call it.
type Service struct {
	cfg        *Config
	db         *db.DB
	store      *store
	clock      clock.Clock
	log        *slog.Logger
	hasher     *hasher
	tokens     *authn.Tokens
	refreshTTL time.Duration
	enforcer   *authz.Enforcer
	policyMu   sync.Mutex            // serialises loadPolicies
	menus      []kernel.Menu         // declared by the enabled modules
	cache      *cache.Map[userState] // what the guard needs of each user
	names      *cache.Map[string]    // full names by user id
	holders    *cache.Map[[]string]  // active users by role name, sorted
	sync       *syncer
	adminEmail string // the seeded administrator's
}

// New builds the service from the kernel's shared infrastructure.
func New(app *kernel.App, cfg *Config) (*Service, error) {
	if err := cfg.validate(app.Config.IsProduction()); err != nil {
		return nil, err
	}
	h := newHasher(cfg.Password.Hash.MemoryKiB, cfg.Password.Hash.Iterations, cfg.Password.Hash.Parallelism, cfg.HashConcurrency, cfg.HashIsolation, app.Log)
	menus := app.Menus()
	if err := checkGrants(menus); err != nil {
		return nil, err
	}
	enf, err := authz.New()
	if err != nil {
		return nil, err
	}
	jwtCfg := app.Config.JWT
	s := &Service{
		cfg:        cfg,
		db:         app.DB,
		store:      &store{db: app.DB},
		clock:      app.Clock,
		log:        app.Log,
		hasher:     h,
		tokens:     authn.NewTokens(jwtCfg.Secret, jwtCfg.Issuer, jwtCfg.Audience, time.Duration(jwtCfg.AccessTokenMinutes)*time.Minute, app.Clock),
		refreshTTL: time.Duration(jwtCfg.RefreshTokenDays) * 24 * time.Hour,
		enforcer:   enf,
		menus:      menus,
		cache:      cache.New[userState](app.Caches, "identity.users", maxCachedUsers),
		names:      cache.New[string](app.Caches, "identity.names", maxCachedUsers),
		holders:    cache.New[[]string](app.Caches, "identity.holders", 64),
		adminEmail: app.Config.Seed.AdminEmail,
	}
	s.sync = &syncer{svc: s, interval: cfg.CacheSyncInterval}
	return s, nil
}

// normalizeEmail is how emails are compared everywhere.
func normalizeEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

func (s *Service) now() time.Time { return s.clock.Now() }

func (s *Service) isLocked(u *User) bool {
	return u.LockoutEnd != nil && u.LockoutEnd.After(s.now())
}

func (s *Service) dto(u *User, roles []string) UserDTO {
	if roles == nil {
		roles = []string{}
	}
	d := UserDTO{ID: u.ID, Email: u.Email, FullName: u.FullName, IsActive: u.IsActive,
		IsLocked: s.isLocked(u), CreatedAt: u.CreatedAt.UTC(), Roles: roles, Version: u.Version}
	if d.IsLocked {
		end := u.LockoutEnd.UTC()
		d.LockoutEnd = &end
	}
	return d
}

// userDTO loads the roles of u and shapes it.
func (s *Service) userDTO(ctx context.Context, u *User) (UserDTO, error) {
	roles, err := s.store.rolesOf(ctx, []string{u.ID})
	if err != nil {
		return UserDTO{}, err
	}
	return s.dto(u, roles[u.ID]), nil
}

func (s *Service) getUser(ctx context.Context, id string) (*User, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, apperr.NotFound("User")
	}
	u, err := s.store.userByID(ctx, id)
	if db.IsNotFound(err) {
		return nil, apperr.NotFound("User")
	}
	return u, err
}

// UserSpec is the list whitelist of users.
var UserSpec = paging.Spec{
	Sort:        map[string]string{"email": "normalized_email", "fullName": "full_name", "createdAt": "created_at"},
	DefaultSort: "email",
}

// ListUsers returns one page of users with their roles (two queries).
func (s *Service) ListUsers(ctx context.Context, f userFilter, req paging.Request) (paging.Page[UserDTO], error) {
	users, total, err := s.store.listUsers(ctx, f, req)
	if err != nil {
		return paging.Page[UserDTO]{}, err
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	roles, err := s.store.rolesOf(ctx, ids)
	if err != nil {
		return paging.Page[UserDTO]{}, err
	}
	items := make([]UserDTO, len(users))
	for i := range users {
		items[i] = s.dto(&users[i], roles[users[i].ID])
	}
	return paging.NewPage(items, req, total), nil
}

// GetUser returns one user.
func (s *Service) GetUser(ctx context.Context, id string) (UserDTO, error) {
	u, err := s.getUser(ctx, id)
	if err != nil {
		return UserDTO{}, err
	}
	return s.userDTO(ctx, u)
}

func (s *Service) checkPassword(field, pw string, min int) *apperr.Error {
	if n := len([]rune(pw)); n < min {
		return apperr.FieldError(field, fmt.Sprintf("Must be at least %d characters long.", min))
	}
	return nil
}

// roleIDs resolves role names, refusing unknown ones.
func (s *Service) roleIDs(ctx context.Context, names []string) ([]string, error) {
	all, err := s.store.roles(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]string{}
	for _, r := range all {
		byName[r.Name] = r.ID
	}
	var ids []string
	fields := apperr.Fields{}
	for _, n := range names {
		id, ok := byName[n]
		if !ok {
			fields.Add("Roles", fmt.Sprintf("Unknown role %q.", n))
			continue
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if err := fields.Err(); err != nil {
		return nil, err
	}
	return ids, nil
}

// CreateUser adds an account and returns its id.
func (s *Service) CreateUser(ctx context.Context, actor authn.Principal, in CreateUserRequest) (string, error) {
	// Trimmed before the rules run: " a@b.c " is a valid address, and a
	// name of spaces is no name.
	in.Email, in.FullName = strings.TrimSpace(in.Email), strings.TrimSpace(in.FullName)
	if err := httpx.Validate(in); err != nil {
		return "", err
	}
	if err := s.checkPassword("Password", in.Password, s.cfg.Password.RequiredLength); err != nil {
		return "", err
	}
	if err := s.protectAdmins(ctx, actor, "", in.Roles); err != nil {
		return "", err
	}
	roleIDs, err := s.roleIDs(ctx, in.Roles)
	if err != nil {
		return "", err
	}
	hash, err := s.hasher.hash(ctx, in.Password)
	if err != nil {
		return "", err
	}
	now := s.now()
	u := &User{
		ID: uuid.Must(uuid.NewV7()).String(), Email: in.Email, NormalizedEmail: normalizeEmail(in.Email),
		FullName: in.FullName, PasswordHash: hash, IsActive: true, SecurityStamp: uuid.NewString(),
		LockoutEnabled: s.cfg.Lockout.AllowedForNewUsers, CreatedAt: now, CreatedBy: &actor.UserID,
		UpdatedAt: now, UpdatedBy: &actor.UserID, Version: 1,
	}
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.createUser(ctx, u, roleIDs); err != nil {
			return err
		}
		return s.userCreated(ctx)
	})
	if db.IsUniqueViolation(err) {
		return "", apperr.Conflict("duplicate_email", "A user with this email already exists.")
	}
	if err != nil {
		return "", err
	}
	return u.ID, nil
}

// UpdateUser changes the name and active flag. Disabling gives the user a
// new security stamp: their refresh tokens are revoked and the guard refuses
// their access tokens at once, and still after the account is enabled again.
func (s *Service) UpdateUser(ctx context.Context, actor authn.Principal, id string, in UpdateUserRequest) (UserDTO, error) {
	u, err := s.getUser(ctx, id)
	if err != nil {
		return UserDTO{}, err
	}
	if err := s.protectAdmins(ctx, actor, id, nil); err != nil {
		return UserDTO{}, err
	}
	in.FullName = strings.TrimSpace(in.FullName)
	if err := httpx.Validate(in); err != nil {
		return UserDTO{}, err
	}
	if !*in.IsActive && id == actor.UserID {
		return UserDTO{}, apperr.BadRequest("cannot_disable_self", "You cannot disable your own account.")
	}
	now := s.now()
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		cols := map[string]any{"full_name": in.FullName, "search_text": userSearchText(u.Email, in.FullName), "is_active": *in.IsActive,
			"updated_at": now, "updated_by": actor.UserID}
		if u.IsActive && !*in.IsActive {
			cols["security_stamp"] = uuid.NewString()
			if err := s.store.revokeUserTokens(ctx, id, now); err != nil {
				return err
			}
		}
		// Compare-and-set on the version the client sent, so of two writers
		// holding the same version exactly one wins.
		ok, err := s.store.updateUserAt(ctx, id, in.Version, cols)
		if err != nil {
			return err
		}
		if !ok {
			return apperr.StaleVersion()
		}
		return s.usersChanged(ctx, id)
	})
	if err != nil {
		return UserDTO{}, err
	}
	return s.GetUser(ctx, id)
}

// SetRoles replaces a user's roles and revokes their tokens.
func (s *Service) SetRoles(ctx context.Context, actor authn.Principal, id string, in SetRolesRequest) (UserDTO, error) {
	if _, err := s.getUser(ctx, id); err != nil {
		return UserDTO{}, err
	}
	if err := httpx.Validate(in); err != nil {
		return UserDTO{}, err
	}
	if err := s.protectAdmins(ctx, actor, id, in.Roles); err != nil {
		return UserDTO{}, err
	}
	roleIDs, err := s.roleIDs(ctx, in.Roles)
	if err != nil {
		return UserDTO{}, err
	}
	if id == actor.UserID && actor.IsAdmin() && !slices.Contains(in.Roles, authn.RoleAdmin) {
		return UserDTO{}, apperr.BadRequest("cannot_remove_own_admin", "You cannot remove the Admin role from yourself.")
	}
	now := s.now()
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.setRoles(ctx, id, roleIDs); err != nil {
			return err
		}
		return s.newSecurityStamp(ctx, id, actor.UserID, now, nil)
	})
	if err != nil {
		return UserDTO{}, err
	}
	return s.GetUser(ctx, id)
}

// newSecurityStamp invalidates every token of the user: access tokens carry
// the stamp, and refresh tokens are revoked.
// extra columns are written in the same update.
func (s *Service) newSecurityStamp(ctx context.Context, userID, actorID string, now time.Time, extra map[string]any) error {
	cols := map[string]any{"security_stamp": uuid.NewString(), "updated_at": now, "updated_by": actorID}
	for k, v := range extra {
		cols[k] = v
	}
	if err := s.store.updateUser(ctx, userID, cols); err != nil {
		return err
	}
	if err := s.store.revokeUserTokens(ctx, userID, now); err != nil {
		return err
	}
	return s.usersChanged(ctx, userID)
}

// ResetPassword sets a new password as an administrator: it unlocks the
// account and revokes its tokens.
func (s *Service) ResetPassword(ctx context.Context, actor authn.Principal, id string, in ResetPasswordRequest) error {
	if _, err := s.getUser(ctx, id); err != nil {
		return err
	}
	if err := s.protectAdmins(ctx, actor, id, nil); err != nil {
		return err
	}
	if err := httpx.Validate(in); err != nil {
		return err
	}
	if err := s.checkPassword("NewPassword", in.NewPassword, s.cfg.Password.RequiredLength); err != nil {
		return err
	}
	return s.setPassword(ctx, id, actor.UserID, in.NewPassword)
}

func (s *Service) setPassword(ctx context.Context, id, actorID, password string) error {
	hash, err := s.hasher.hash(ctx, password)
	if err != nil {
		return err
	}
	now := s.now()
	return s.db.InTx(ctx, func(ctx context.Context) error {
		return s.newSecurityStamp(ctx, id, actorID, now,
			map[string]any{"password_hash": hash, "access_failed_count": 0, "lockout_end": nil})
	})
}

// Unlock clears a lockout and the failure count.
func (s *Service) Unlock(ctx context.Context, actor authn.Principal, id string) error {
	if _, err := s.getUser(ctx, id); err != nil {
		return err
	}
	if err := s.protectAdmins(ctx, actor, id, nil); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		return s.store.updateUser(ctx, id, map[string]any{"access_failed_count": 0, "lockout_end": nil,
			"updated_at": s.now(), "updated_by": actor.UserID})
	})
}

// protectAdmins keeps the Admin role in administrators' hands: whoever else
// holds Users.Create or Users.Update may not grant Admin, nor change,
// reset or unlock an administrator's account, so the permission cannot be
// turned into the role.
func (s *Service) protectAdmins(ctx context.Context, actor authn.Principal, targetID string, newRoles []string) error {
	if actor.IsAdmin() {
		return nil
	}
	deny := apperr.Forbidden("Only an administrator may grant the Admin role or change an administrator's account.")
	if slices.Contains(newRoles, authn.RoleAdmin) {
		return deny
	}
	if targetID == "" {
		return nil
	}
	roles, err := s.store.rolesOf(ctx, []string{targetID})
	if err != nil {
		return err
	}
	if slices.Contains(roles[targetID], authn.RoleAdmin) {
		return deny
	}
	return nil
}

// ResetPasswordByEmail is the operator's way back into a locked-out
// administrator account (CLI).
func (s *Service) ResetPasswordByEmail(ctx context.Context, email, password string) error {
	u, err := s.store.userByEmail(ctx, normalizeEmail(email))
	if db.IsNotFound(err) {
		return fmt.Errorf("no user has the email %q", email)
	}
	if err != nil {
		return err
	}
	if n := len([]rune(password)); n < s.cfg.Password.RequiredLength || n > MaxPasswordLength {
		return fmt.Errorf("the password must be %d to %d characters long", s.cfg.Password.RequiredLength, MaxPasswordLength)
	}
	return s.setPassword(ctx, u.ID, u.ID, password)
}

// Names resolves user ids to full names (for other modules), from memory
// once known (unknown ids are asked again each time).
func (s *Service) Names(ctx context.Context, ids []string) (map[string]string, error) {
	if len(ids) == 0 {
		return map[string]string{}, nil
	}
	return s.names.Load(ctx, ids, s.store.names)
}

// ActiveStamps maps each active user among ids to its current security
// stamp, read from the database rather than from this node's cache.
func (s *Service) ActiveStamps(ctx context.Context, ids []string) (map[string]string, error) {
	return s.store.activeStamps(ctx, ids)
}

// SyncInterval is identity.cacheSyncInterval.
func (s *Service) SyncInterval() time.Duration { return s.cfg.CacheSyncInterval }

// UserIDsInRoles lists active users holding any of roles (for other modules).
func (s *Service) UserIDsInRoles(ctx context.Context, roles []string) ([]string, error) {
	if len(roles) == 0 {
		return nil, nil
	}
	byRole, err := s.holders.Load(ctx, roles, s.store.holders)
	if err != nil {
		return nil, err
	}
	// Each role's holders come sorted (the loader orders them), so their
	// union is a merge: sorting it was a fifth of a move's notification.
	var ids []string
	for _, r := range roles {
		ids = union(ids, byRole[r])
	}
	return ids, nil
}

// union merges two sorted lists of distinct ids into a new one; it sorts
// when either is not in Go's order (a database collation may differ).
func union(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	if !slices.IsSorted(a) || !slices.IsSorted(b) {
		out = append(append(out, a...), b...)
		slices.Sort(out)
		return slices.Compact(out)
	}
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case b[0] < a[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}
