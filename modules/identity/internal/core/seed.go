package core

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/search"
)

// DefaultAdminPassword is the password the administrator is seeded with
// unless seed.adminPassword says otherwise; each start warns while it is in use.
const DefaultAdminPassword = "ChangeMe-Admin-2026"

// Start loads the permission matrix into the enforcer and notes the change
// counters; it runs at provision, before any request.
func (s *Service) Start(ctx context.Context) error {
	indexed, err := search.EnsureIndexes(ctx, s.db, s.log, "users")
	if err != nil {
		return err
	}
	s.store.indexed = indexed["users"]
	if err := s.loadPolicies(ctx); err != nil {
		return err
	}
	return s.sync.prime(ctx)
}

// Seed inserts what is missing, never changing what exists: the roles, the
// menu entries of the enabled modules, their default permissions and the
// administrator. Running it twice changes nothing.
func (s *Service) Seed(ctx context.Context, app *kernel.App) error {
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		roleIDs, err := s.seedRoles(ctx)
		if err != nil {
			return err
		}
		for _, m := range s.menus {
			item := MenuItem{MenuKey: m.Key, Title: m.Title, Path: m.Path, SortOrder: m.Order}
			if m.ParentKey != "" {
				item.ParentKey = &m.ParentKey
			}
			if err := s.store.upsertMenu(ctx, item); err != nil {
				return err
			}
		}
		for _, r := range seedRoles {
			for _, m := range s.menus {
				f := defaultFlags(r.Name, m)
				p := Permission{RoleID: roleIDs[r.Name], MenuKey: m.Key, CanRead: f.Read, CanCreate: f.Create,
					CanUpdate: f.Update, CanDelete: f.Delete, UpdatedAt: s.now()}
				if err := s.store.insertPermissionIfMissing(ctx, p); err != nil {
					return err
				}
			}
		}
		return s.seedAdmin(ctx, app, roleIDs[authn.RoleAdmin])
	})
	if err != nil {
		return err
	}
	return s.loadPolicies(ctx)
}

func (s *Service) seedRoles(ctx context.Context) (map[string]string, error) {
	existing, err := s.store.roles(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, r := range existing {
		ids[r.Name] = r.ID
	}
	for _, r := range seedRoles {
		if _, ok := ids[r.Name]; ok {
			continue
		}
		role := Role{ID: uuid.Must(uuid.NewV7()).String(), Name: r.Name, Description: r.Description}
		if r.Code != "" {
			code := r.Code
			role.Code = &code
		}
		if err := s.store.conn(ctx).Create(&role).Error; err != nil {
			return nil, err
		}
		ids[r.Name] = role.ID
	}
	return ids, nil
}

func (s *Service) seedAdmin(ctx context.Context, app *kernel.App, adminRoleID string) error {
	email := app.Config.Seed.AdminEmail
	_, err := s.store.userByEmail(ctx, normalizeEmail(email))
	if err == nil || !db.IsNotFound(err) {
		return err
	}
	hash, err := s.hasher.hash(ctx, app.Config.Seed.AdminPassword)
	if err != nil {
		return err
	}
	now := s.now()
	u := &User{ID: uuid.Must(uuid.NewV7()).String(), Email: strings.TrimSpace(email), NormalizedEmail: normalizeEmail(email),
		FullName: "Administrator", PasswordHash: hash, IsActive: true, SecurityStamp: uuid.NewString(),
		LockoutEnabled: s.cfg.Lockout.AllowedForNewUsers, CreatedAt: now, UpdatedAt: now, Version: 1}
	if err := s.store.createUser(ctx, u, []string{adminRoleID}); err != nil {
		return err
	}
	return s.userCreated(ctx)
}

// WarnDefaultAdminPassword logs an error while the seeded administrator
// still has the default password. It costs a password hash, so it runs in
// the background once the service listens (DESIGN §2: the warning is in the
// log within a second), and ends the hashing child it started rather than
// keep it through the idle time.
func (s *Service) WarnDefaultAdminPassword(ctx context.Context) {
	u, err := s.store.userByEmail(ctx, normalizeEmail(s.adminEmail))
	if err != nil {
		return
	}
	ok, _ := s.hasher.verify(ctx, DefaultAdminPassword, u.PasswordHash)
	s.hasher.release()
	if ok {
		s.log.Error("the administrator still has the default password; change it now",
			"email", u.Email, "hint", "POST /api/auth/change-password or contractflow user reset-password --email "+u.Email)
	}
}
