// Package authz decides "may one of these roles perform this action on this
// menu key" with Casbin, from policies its owner loads (the identity module's
// Permission rows). Decisions are cached; Load replaces the policies and
// clears the cache, so a change takes effect on the next request.
package authz

import (
	"fmt"
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"

	"github.com/contractflow/contractflow/config"
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

// Allowed reports whether any of roles grants policy ("<menuKey>.<Action>").
func (en *Enforcer) Allowed(roles []string, policy string) bool {
	menu, action, ok := strings.Cut(policy, ".")
	if !ok {
		return false
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
