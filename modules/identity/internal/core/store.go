package core

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
)

// store is the only code that touches the identity tables.
type store struct {
	db      *db.DB
	indexed bool // users has a SQLite trigram index (platform/search)
}

// userSearchText is what a users search matches: the email and the name.
func userSearchText(email, fullName string) string { return search.Text(email, fullName) }

func (s *store) conn(ctx context.Context) *gorm.DB { return s.db.Conn(ctx) }

func (s *store) userByEmail(ctx context.Context, normalized string) (*User, error) {
	var u User
	if err := s.conn(ctx).Where("normalized_email = ?", normalized).Take(&u).Error; err != nil {
		return nil, err
	}
	return &u, nil
}

func (s *store) userByID(ctx context.Context, id string) (*User, error) {
	var u User
	if err := s.conn(ctx).Where("id = ?", id).Take(&u).Error; err != nil {
		return nil, err
	}
	return &u, nil
}

// rolesOf returns the role names of each user, in one query.
func (s *store) rolesOf(ctx context.Context, userIDs []string) (map[string][]string, error) {
	out := make(map[string][]string, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	var rows []struct{ UserID, Name string }
	err := s.conn(ctx).Table("user_roles").
		Select("user_roles.user_id, roles.name").
		Joins("JOIN roles ON roles.id = user_roles.role_id").
		Where("user_roles.user_id IN ?", userIDs).
		Order("roles.name").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.UserID] = append(out[r.UserID], r.Name)
	}
	return out, nil
}

type userFilter struct {
	Search   string
	IsActive *bool
	Role     string
}

func (s *store) listUsers(ctx context.Context, f userFilter, req paging.Request) ([]User, int64, error) {
	q := s.conn(ctx).Model(&User{})
	for _, w := range search.Words(f.Search) {
		q = search.Match(q, "users", s.indexed, w)
	}
	if f.IsActive != nil {
		q = q.Where("is_active = ?", *f.IsActive)
	}
	if f.Role != "" {
		q = q.Where("id IN (?)", s.conn(ctx).Table("user_roles").Select("user_roles.user_id").
			Joins("JOIN roles ON roles.id = user_roles.role_id").Where("roles.name = ?", f.Role))
	}
	return db.PageOf[User](q, req)
}

func (s *store) createUser(ctx context.Context, u *User, roleIDs []string) error {
	u.SearchText = userSearchText(u.Email, u.FullName)
	if err := s.conn(ctx).Create(u).Error; err != nil {
		return err
	}
	return s.setRoles(ctx, u.ID, roleIDs)
}

// updateUser writes exactly the given columns (never relying on GORM to skip
// zero values) and bumps the row version.
func (s *store) updateUser(ctx context.Context, id string, cols map[string]any) error {
	_, err := s.updateUserAt(ctx, id, nil, cols)
	return err
}

// updateUserAt is updateUser on the condition that the row still has
// version (when given); it reports whether the row was updated.
func (s *store) updateUserAt(ctx context.Context, id string, version *int, cols map[string]any) (bool, error) {
	cols["version"] = gorm.Expr("version + 1")
	q := s.conn(ctx).Model(&User{}).Where("id = ?", id)
	if version != nil {
		q = q.Where("version = ?", *version)
	}
	res := q.Updates(cols)
	return res.RowsAffected == 1, res.Error
}

func (s *store) setRoles(ctx context.Context, userID string, roleIDs []string) error {
	if err := s.conn(ctx).Where("user_id = ?", userID).Delete(&userRole{}).Error; err != nil {
		return err
	}
	if len(roleIDs) == 0 {
		return nil
	}
	rows := make([]userRole, len(roleIDs))
	for i, r := range roleIDs {
		rows[i] = userRole{UserID: userID, RoleID: r}
	}
	return s.conn(ctx).Create(&rows).Error
}

// incrementFailures adds one failed attempt and returns the new count; the
// row lock it takes serialises concurrent failures of one account.
func (s *store) incrementFailures(ctx context.Context, id string) (int, error) {
	if err := s.conn(ctx).Model(&User{}).Where("id = ?", id).
		Update("access_failed_count", gorm.Expr("access_failed_count + 1")).Error; err != nil {
		return 0, err
	}
	var n int
	err := s.conn(ctx).Model(&User{}).Select("access_failed_count").Where("id = ?", id).Scan(&n).Error
	return n, err
}

func (s *store) roles(ctx context.Context) ([]Role, error) {
	var roles []Role
	err := s.conn(ctx).Order("name").Find(&roles).Error
	return roles, err
}

func (s *store) insertToken(ctx context.Context, t *RefreshToken) error {
	return s.conn(ctx).Create(t).Error
}

func (s *store) tokenByHash(ctx context.Context, hash string) (*RefreshToken, error) {
	var t RefreshToken
	if err := s.conn(ctx).Where("token_hash = ?", hash).Take(&t).Error; err != nil {
		return nil, err
	}
	return &t, nil
}

// markUsed is the compare-and-set of rotation: exactly one caller marks an
// unused token, so two concurrent refreshes cannot both succeed.
func (s *store) markUsed(ctx context.Context, id string, now time.Time) (bool, error) {
	res := s.conn(ctx).Model(&RefreshToken{}).Where("id = ? AND used_at IS NULL AND revoked_at IS NULL", id).Update("used_at", now)
	return res.RowsAffected == 1, res.Error
}

func (s *store) revokeFamily(ctx context.Context, familyID string, now time.Time) error {
	return s.conn(ctx).Model(&RefreshToken{}).Where("family_id = ? AND revoked_at IS NULL", familyID).Update("revoked_at", now).Error
}

func (s *store) revokeUserTokens(ctx context.Context, userID string, now time.Time) error {
	return s.conn(ctx).Model(&RefreshToken{}).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", now).Error
}

func (s *store) menus(ctx context.Context) ([]MenuItem, error) {
	var items []MenuItem
	err := s.conn(ctx).Order("sort_order, menu_key").Find(&items).Error
	return items, err
}

// upsertMenu inserts a menu entry or refreshes its title, path, parent and order.
func (s *store) upsertMenu(ctx context.Context, m MenuItem) error {
	return s.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "menu_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"title", "path", "parent_key", "sort_order"}),
	}).Create(&m).Error
}

// insertPermissionIfMissing keeps rows an administrator has changed.
func (s *store) insertPermissionIfMissing(ctx context.Context, p Permission) error {
	return s.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&p).Error
}

type permissionRow struct {
	Permission
	RoleName string
}

func (s *store) permissions(ctx context.Context, roleName string) ([]permissionRow, error) {
	q := s.conn(ctx).Table("permissions").
		Select("permissions.*, roles.name AS role_name").
		Joins("JOIN roles ON roles.id = permissions.role_id")
	if roleName != "" {
		q = q.Where("roles.name = ?", roleName)
	}
	var rows []permissionRow
	err := q.Order("roles.name, permissions.menu_key").Scan(&rows).Error
	return rows, err
}

func (s *store) savePermission(ctx context.Context, p Permission) error {
	return s.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "role_id"}, {Name: "menu_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"can_read", "can_create", "can_update", "can_delete", "updated_at", "updated_by"}),
	}).Create(&p).Error
}

func (s *store) state(ctx context.Context) (state, error) {
	var st state
	err := s.conn(ctx).Where("id = 1").Take(&st).Error
	return st, err
}

// bump increments one change counter so other nodes drop their caches.
func (s *store) bump(ctx context.Context, column string) error {
	return s.conn(ctx).Model(&state{}).Where("id = 1").Update(column, gorm.Expr(column+" + 1")).Error
}

// holders maps each of roles to the active users holding it, sorted, in
// one query (the primary key of roles.name, ix_user_roles_role and the
// users' primary key serve it); a role nobody active holds maps to an empty
// list, so that it is cached too.
func (s *store) holders(ctx context.Context, roles []string) (map[string][]string, error) {
	var rows []struct{ Name, UserID string }
	err := s.conn(ctx).Table("user_roles").Select("roles.name, user_roles.user_id").
		Joins("JOIN roles ON roles.id = user_roles.role_id").
		Joins("JOIN users ON users.id = user_roles.user_id").
		Where("roles.name IN ? AND users.is_active = ?", roles, true).
		Order("roles.name, user_roles.user_id").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(roles))
	for _, r := range roles {
		out[r] = []string{}
	}
	for _, r := range rows {
		out[r.Name] = append(out[r.Name], r.UserID)
	}
	return out, nil
}

// activeStamps maps each active user among ids to its security stamp, a
// chunk of ids per query to stay under SQLite's parameter limit.
func (s *store) activeStamps(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		var rows []struct{ ID, SecurityStamp string }
		if err := s.conn(ctx).Model(&User{}).Select("id, security_stamp").Where("id IN ? AND is_active = ?", chunk, true).
			Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.ID] = r.SecurityStamp
		}
	}
	return out, nil
}

func (s *store) names(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct{ ID, FullName string }
	if err := s.conn(ctx).Model(&User{}).Select("id, full_name").Where("id IN ?", ids).Scan(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.ID] = r.FullName
	}
	return out, nil
}
