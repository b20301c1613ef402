// Package authz decides "may one of these roles perform this action on this
// menu key" with Casbin, from policies its owner loads (the identity module's
// Permission rows). Decisions are cached; Load replaces the policies and
// clears the cache, so a change takes effect on the next request.
//
// The Admin rule (Admin passes every policy, whatever the matrix holds) is
// decided here and nowhere else: by PassesEveryPolicy, which Allowed applies
// before consulting the matrix. The Casbin model knows no role by name.
package authz

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"

	"github.com/contractflow/contractflow/config"
	"github.com/contractflow/contractflow/platform/authn"
)

// Actions of a menu key, as they appear in policy names.
const (
	Read   = "Read"
	Create = "Create"
	Update = "Update"
	Delete = "Delete"
)

// Actions lists the four actions in matrix order.
var Actions = []string{Read, Create, Update, Delete}

// PassesEveryPolicy reports whether roles pass every policy without a
// grant: they include Admin (DESIGN §2). Code that decides, shows or seeds
// permissions asks this rather than comparing role names itself.
func PassesEveryPolicy(roles ...string) bool { return slices.Contains(roles, authn.RoleAdmin) }

// ActionsOf reads the letters of a default grant (kernel.Grants: C create,
// R read, U update, D delete, each at most once, in any order) as actions,
// in matrix order.
func ActionsOf(letters string) ([]string, error) {
	seen := map[rune]bool{}
	for _, c := range letters {
		if !strings.ContainsRune("CRUD", c) {
			return nil, fmt.Errorf("grant %q: %q is not one of C, R, U, D", letters, c)
		}
		if seen[c] {
			return nil, fmt.Errorf("grant %q: %q appears twice", letters, c)
		}
		seen[c] = true
	}
	var out []string
	for _, a := range Actions {
		if seen[rune(a[0])] {
			out = append(out, a)
		}
	}
	return out, nil
}

// Grant is one policy line: role may act on menuKey.
type Grant struct {
	Role, MenuKey, Action string
}

// Enforcer answers permission questions.
type Enforcer struct {
	mu    sync.RWMutex
	e     *casbin.Enforcer
	cache sync.Map // "role|menu|action" → bool
}

// New returns an enforcer with no grants.
func New() (*Enforcer, error) {
	m, err := model.NewModelFromString(config.AuthzModel)
	if err != nil {
		return nil, fmt.Errorf("authz model: %w", err)
	}
	e, err := casbin.NewEnforcer(m)
	if err != nil {
		return nil, fmt.Errorf("authz enforcer: %w", err)
	}
	e.EnableAutoSave(false)
	return &Enforcer{e: e}, nil
}

// Load replaces every policy with grants.
func (en *Enforcer) Load(grants []Grant) error {
	rules := make([][]string, 0, len(grants))
	for _, g := range grants {
		rules = append(rules, []string{g.Role, g.MenuKey, g.Action})
	}
	en.mu.Lock()
	defer en.mu.Unlock()
	en.e.ClearPolicy()
	if len(rules) > 0 {
		if _, err := en.e.AddPolicies(rules); err != nil {
			return fmt.Errorf("load policies: %w", err)
		}
	}
	en.cache.Clear()
	return nil
}

// Allowed reports whether roles pass policy ("<menuKey>.<Action>"): Admin
// passes every policy, any other role when the matrix grants it.
func (en *Enforcer) Allowed(roles []string, policy string) bool {
	menu, action, ok := strings.Cut(policy, ".")
	if !ok {
		return false
	}
	if PassesEveryPolicy(roles...) {
		return true
	}
	for _, r := range roles {
		if en.allowed(r, menu, action) {
			return true
		}
	}
	return false
}

func (en *Enforcer) allowed(role, menu, action string) bool {
	// The read lock spans lookup and store, so a decision computed from old
	// policies can never land in the cache after Load cleared it.
	en.mu.RLock()
	defer en.mu.RUnlock()
	key := role + "|" + menu + "|" + action
	if v, ok := en.cache.Load(key); ok {
		return v.(bool)
	}
	ok, err := en.e.Enforce(role, menu, action)
	ok = ok && err == nil
	en.cache.Store(key, ok)
	return ok
}
