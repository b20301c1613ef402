package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/authz"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
)

// Roles lists the twelve roles.
func (s *Service) Roles(ctx context.Context) ([]RoleDTO, error) {
	roles, err := s.store.roles(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]RoleDTO, len(roles))
	for i, r := range roles {
		out[i] = RoleDTO(r)
	}
	return out, nil
}

// declared reports whether an enabled module declares the menu key.
func (s *Service) declared(key string) bool {
	return slices.ContainsFunc(s.menus, func(m kernel.Menu) bool { return m.Key == key })
}

// effective returns the roles' flags on each declared menu key, as the
// guard decides them (Admin passes every policy; see authz).
func (s *Service) effective(roles []string) map[string]Flags {
	out := make(map[string]Flags, len(s.menus))
	for _, m := range s.menus {
		allowed := func(action string) bool { return s.enforcer.Allowed(roles, m.Key+"."+action) }
		out[m.Key] = Flags{Read: allowed(authz.Read), Create: allowed(authz.Create), Update: allowed(authz.Update), Delete: allowed(authz.Delete)}
	}
	return out
}

// MenuTree returns the declared menu entries as a tree. With onlyReadable,
// an entry appears when the flags grant Read, or when one of its children
// does (so the child can be reached).
func (s *Service) MenuTree(ctx context.Context, roles []string, onlyReadable bool) ([]MenuNode, error) {
	perms := s.effective(roles)
	items, err := s.store.menus(ctx)
	if err != nil {
		return nil, err
	}
	children := map[string][]MenuItem{}
	var roots []MenuItem
	for _, it := range items {
		if !s.declared(it.MenuKey) {
			continue // its module is switched off
		}
		if it.ParentKey != nil && s.declared(*it.ParentKey) {
			children[*it.ParentKey] = append(children[*it.ParentKey], it)
		} else {
			roots = append(roots, it)
		}
	}
	var build func(it MenuItem) (MenuNode, bool)
	build = func(it MenuItem) (MenuNode, bool) {
		n := MenuNode{Key: it.MenuKey, Title: it.Title, Path: it.Path, Order: it.SortOrder,
			Permissions: perms[it.MenuKey], Children: []MenuNode{}}
		for _, c := range children[it.MenuKey] {
			if cn, ok := build(c); ok {
				n.Children = append(n.Children, cn)
			}
		}
		return n, !onlyReadable || n.Permissions.Read || len(n.Children) > 0
	}
	out := []MenuNode{}
	for _, r := range roots {
		if n, ok := build(r); ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// Permissions lists matrix rows, of one role or of all.
func (s *Service) Permissions(ctx context.Context, role string) ([]PermissionDTO, error) {
	if role != "" {
		if _, err := s.roleIDs(ctx, []string{role}); err != nil {
			return nil, apperr.FieldError("Role", fmt.Sprintf("Unknown role %q.", role))
		}
	}
	rows, err := s.store.permissions(ctx, role)
	if err != nil {
		return nil, err
	}
	out := make([]PermissionDTO, 0, len(rows))
	for _, r := range rows {
		if !s.declared(r.MenuKey) {
			continue
		}
		out = append(out, PermissionDTO{Role: r.RoleName, MenuKey: r.MenuKey,
			CanRead: r.CanRead, CanCreate: r.CanCreate, CanUpdate: r.CanUpdate, CanDelete: r.CanDelete})
	}
	return out, nil
}

// SavePermission upserts one row. The Admin role's flags cannot be lowered.
// The change reaches this node's enforcer after commit and other nodes on
// their next sync.
func (s *Service) SavePermission(ctx context.Context, actor authn.Principal, in PermissionRequest) (PermissionDTO, error) {
	if err := httpx.Validate(in); err != nil {
		return PermissionDTO{}, err
	}
	ids, err := s.roleIDs(ctx, []string{in.Role})
	if err != nil {
		return PermissionDTO{}, apperr.FieldError("Role", fmt.Sprintf("Unknown role %q.", in.Role))
	}
	if !s.declared(in.MenuKey) {
		return PermissionDTO{}, apperr.FieldError("MenuKey", fmt.Sprintf("Unknown menu key %q.", in.MenuKey))
	}
	f := Flags{*in.CanRead, *in.CanCreate, *in.CanUpdate, *in.CanDelete}
	if authz.PassesEveryPolicy(in.Role) && f != (Flags{true, true, true, true}) {
		return PermissionDTO{}, apperr.BadRequest("cannot_lower_admin", "The Admin role keeps every permission.")
	}
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		err := s.store.savePermission(ctx, Permission{RoleID: ids[0], MenuKey: in.MenuKey,
			CanRead: f.Read, CanCreate: f.Create, CanUpdate: f.Update, CanDelete: f.Delete,
			UpdatedAt: s.now(), UpdatedBy: &actor.UserID})
		if err != nil {
			return err
		}
		return s.permissionsChanged(ctx)
	})
	if err != nil {
		return PermissionDTO{}, err
	}
	return PermissionDTO{Role: in.Role, MenuKey: in.MenuKey, CanRead: f.Read, CanCreate: f.Create, CanUpdate: f.Update, CanDelete: f.Delete}, nil
}

// loadPolicies rebuilds the enforcer from the Permission rows. Loads run one
// at a time, each reading the rows inside the lock: a load that read the rows
// before a change committed can then never be applied after the load that
// read the change (the syncer and a local change may reload together).
func (s *Service) loadPolicies(ctx context.Context) error {
	s.policyMu.Lock()
	defer s.policyMu.Unlock()
	rows, err := s.store.permissions(ctx, "")
	if err != nil {
		return err
	}
	var grants []authz.Grant
	for _, r := range rows {
		for action, on := range map[string]bool{authz.Read: r.CanRead, authz.Create: r.CanCreate, authz.Update: r.CanUpdate, authz.Delete: r.CanDelete} {
			if on {
				grants = append(grants, authz.Grant{Role: r.RoleName, MenuKey: r.MenuKey, Action: action})
			}
		}
	}
	return s.enforcer.Load(grants)
}
