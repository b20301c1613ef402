// Package identity is the public contract of the identity module: the role
// names and the Directory other modules use to learn about users. Who is
// calling a request comes from platform/authn.Caller.
package identity

import (
	"context"
	"time"
)

// Role names (DESIGN §2).
const (
	RoleAdmin            = "Admin"
	RoleDrafter          = "Drafter"
	RoleDeptManager      = "DeptManager"
	RoleProjectManager   = "ProjectManager"
	RoleProcurement      = "Procurement"
	RoleCostControl      = "CostControl"
	RoleFinance          = "Finance"
	RoleAccounting       = "Accounting"
	RoleEquipment        = "Equipment"
	RoleDirector         = "Director"
	RoleAuthorizedSigner = "AuthorizedSigner"
	RoleHrAdmin          = "HrAdmin"
)

// Roles lists the twelve role names, Admin first: what a workflow step or
// move may name.
func Roles() []string {
	return []string{RoleAdmin, RoleDrafter, RoleDeptManager, RoleProjectManager, RoleProcurement, RoleCostControl,
		RoleFinance, RoleAccounting, RoleEquipment, RoleDirector, RoleAuthorizedSigner, RoleHrAdmin}
}

// Directory answers other modules' questions about users without giving
// them the users table. Obtain it with kernel.Need[identity.Directory].
type Directory interface {
	// Names maps user ids to full names; unknown ids are left out.
	Names(ctx context.Context, ids []string) (map[string]string, error)
	// UserIDsInRoles lists the active users holding any of roles.
	UserIDsInRoles(ctx context.Context, roles []string) ([]string, error)
}

// Sessions lets a long-lived connection opened by a signed-in user (a
// notification socket) notice that the sign-in ended: the user was disabled
// or the security stamp changed. Obtain it with kernel.Need[identity.Sessions].
type Sessions interface {
	// ActiveStamps maps each active user among ids to their current
	// security stamp, read from the database (not a node's cache); disabled
	// and unknown users are left out.
	ActiveStamps(ctx context.Context, ids []string) (map[string]string, error)
	// SyncInterval is identity.cacheSyncInterval, within which such a change
	// must take effect on every node.
	SyncInterval() time.Duration
}
