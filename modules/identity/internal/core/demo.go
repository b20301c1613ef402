package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/kernel"
)

// demoRoleShare is how the demo users spread over the roles (percent);
// Drafter takes the rounding.
var demoRoleShare = []struct {
	Role  string
	Share int
}{
	{"Drafter", 30}, {"DeptManager", 8}, {"ProjectManager", 10}, {"Procurement", 8}, {"CostControl", 7},
	{"Finance", 7}, {"Accounting", 7}, {"Equipment", 6}, {"Director", 3}, {"AuthorizedSigner", 4},
	{"HrAdmin", 5}, {"Admin", 5},
}

// DemoEmail is the address of the n-th demo user of role.
func DemoEmail(role string, n int) string {
	return fmt.Sprintf("%s.%04d@demo.contractflow.local", strings.ToLower(role), n)
}

// SeedDemoSet adds set.Size.Users demo users over the twelve roles, one
// role each, all with set.Size.Password (hashed once: the users share the
// hash, which is fine for demo data and keeps the load free of a thousand
// argon2 runs), then hands their ids by role to the modules after it. When
// the first demo user exists it adds nothing.
func (s *Service) SeedDemoSet(ctx context.Context, set *kernel.DemoSet) error {
	total := set.Size.Users
	want := map[string]int{}
	rest := 0
	for _, rs := range demoRoleShare[1:] {
		want[rs.Role] = max(1, total*rs.Share/100)
		rest += want[rs.Role]
	}
	want[demoRoleShare[0].Role] = max(1, total-rest)
	roleIDs := map[string]string{}
	roles, err := s.store.roles(ctx)
	if err != nil {
		return err
	}
	for _, r := range roles {
		roleIDs[r.Name] = r.ID
	}
	for _, rs := range demoRoleShare {
		if roleIDs[rs.Role] == "" {
			return fmt.Errorf("role %s is not seeded", rs.Role)
		}
	}
	_, err = s.store.userByEmail(ctx, normalizeEmail(DemoEmail(demoRoleShare[0].Role, 0)))
	switch {
	case err == nil: // loaded before
	case !db.IsNotFound(err):
		return err
	default:
		if err := s.insertDemoUsers(ctx, set, want, roleIDs); err != nil {
			return err
		}
	}
	return s.demoUsersByRole(ctx, set)
}

func (s *Service) insertDemoUsers(ctx context.Context, set *kernel.DemoSet, want map[string]int, roleIDs map[string]string) error {
	hash, err := s.hasher.hash(ctx, set.Size.Password)
	if err != nil {
		return err
	}
	r := set.Rand(1)
	var users, links [][]any
	n := 0
	for _, rs := range demoRoleShare {
		for k := range want[rs.Role] {
			id := kernel.NewID(r, n)
			email := DemoEmail(rs.Role, k)
			name := kernel.DemoPerson(n)
			at := set.Now.Add(-demoAge(r))
			users = append(users, []any{id, email, normalizeEmail(email), name, userSearchText(email, name), hash, true,
				kernel.NewID(r, n), s.cfg.Lockout.AllowedForNewUsers, 0, at, at, 1})
			links = append(links, []any{id, roleIDs[rs.Role]})
			n++
		}
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		if err := s.db.InsertRows(ctx, "users", []string{"id", "email", "normalized_email", "full_name", "search_text", "password_hash",
			"is_active", "security_stamp", "lockout_enabled", "access_failed_count", "created_at", "updated_at", "version"}, users); err != nil {
			return err
		}
		if err := s.db.InsertRows(ctx, "user_roles", []string{"user_id", "role_id"}, links); err != nil {
			return err
		}
		return s.userCreated(ctx)
	})
}

// demoUsersByRole fills set.UsersByRole with the demo users, in email order.
func (s *Service) demoUsersByRole(ctx context.Context, set *kernel.DemoSet) error {
	var rows []struct{ ID, Name string }
	err := s.store.conn(ctx).Raw(`SELECT u.id AS id, r.name AS name FROM users u JOIN user_roles ur ON ur.user_id = u.id
		JOIN roles r ON r.id = ur.role_id WHERE u.normalized_email LIKE ? ORDER BY u.normalized_email`, "%@demo.contractflow.local").Scan(&rows).Error
	if err != nil {
		return err
	}
	for _, u := range rows {
		set.UsersByRole[u.Name] = append(set.UsersByRole[u.Name], u.ID)
	}
	for _, rs := range demoRoleShare {
		if len(set.UsersByRole[rs.Role]) == 0 {
			return fmt.Errorf("no demo user of role %s", rs.Role)
		}
	}
	return nil
}

// demoAge is how long ago a demo user joined: up to 700 days.
func demoAge(r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(700 * 24 * time.Hour))) }
