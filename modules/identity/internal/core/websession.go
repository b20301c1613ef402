package core

import (
	"context"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/web"
)

// PageSessions are the browser pages' sign-in sessions (web.Sessions). A
// session is the refresh token of a login's family, kept in an HttpOnly
// cookie and never rotated by the pages: whatever ends the family for the
// API (sign-out, password change or reset, role change, disabling the user)
// ends the session, and a session token that was redeemed at
// /api/auth/refresh is a reused token, which revokes the family as the
// API's refresh does.
type PageSessions struct{ svc *Service }

var _ web.Sessions = PageSessions{}

// PageSessions returns the service's web.Sessions.
func (s *Service) PageSessions() PageSessions { return PageSessions{svc: s} }

// SignIn is POST /api/auth/login: the same checks, lockout and answers.
func (ps PageSessions) SignIn(ctx context.Context, email, password string) (string, authn.Principal, error) {
	out, err := ps.svc.Login(ctx, LoginRequest{Email: email, Password: password})
	if err != nil {
		return "", authn.Principal{}, err
	}
	u := out.User
	return out.RefreshToken, authn.Principal{UserID: u.ID, Email: u.Email, Name: u.FullName, Roles: u.Roles}, nil
}

// Resume checks the session's token and its user on every page request,
// against the database, so an ended session ends on every node at once.
func (ps PageSessions) Resume(ctx context.Context, token string) (authn.Principal, error) {
	s := ps.svc
	s.sync.maybe(ctx)
	t, err := s.store.tokenByHash(ctx, hashToken(token))
	if db.IsNotFound(err) {
		return authn.Principal{}, tokenInvalid("The session is not valid; sign in again.")
	}
	if err != nil {
		return authn.Principal{}, err
	}
	now := s.now()
	if t.RevokedAt != nil || !t.ExpiresAt.After(now) {
		return authn.Principal{}, tokenInvalid("The session has ended; sign in again.")
	}
	if t.UsedAt != nil {
		if err := s.db.InTx(ctx, func(ctx context.Context) error { return s.store.revokeFamily(ctx, t.FamilyID, now) }); err != nil {
			return authn.Principal{}, err
		}
		return authn.Principal{}, tokenInvalid("The session's token was used elsewhere; every token of the sign-in is revoked.")
	}
	st, err := s.userState(ctx, t.UserID)
	if db.IsNotFound(err) {
		return authn.Principal{}, tokenInvalid("The session's user no longer exists.")
	}
	if err != nil {
		return authn.Principal{}, err
	}
	if !st.active {
		return authn.Principal{}, tokenInvalid("The account is disabled.")
	}
	return authn.Principal{UserID: t.UserID, Email: st.email, Name: st.name, Roles: st.roles}, nil
}

// SignOut revokes the session's family, as POST /api/auth/logout does.
func (ps PageSessions) SignOut(ctx context.Context, token string) error {
	s := ps.svc
	return s.db.InTx(ctx, func(ctx context.Context) error {
		t, err := s.store.tokenByHash(ctx, hashToken(token))
		if db.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return s.store.revokeFamily(ctx, t.FamilyID, s.now())
	})
}

// Allowed decides a policy as the guard does.
func (ps PageSessions) Allowed(roles []string, policy string) bool {
	return ps.svc.enforcer.Allowed(roles, policy)
}

// ReadableMenus is the tree of GET /api/menus/me.
func (ps PageSessions) ReadableMenus(ctx context.Context, roles []string) ([]web.MenuNode, error) {
	tree, err := ps.svc.MenuTree(ctx, roles, true)
	if err != nil {
		return nil, err
	}
	var conv func([]MenuNode) []web.MenuNode
	conv = func(ns []MenuNode) []web.MenuNode {
		out := make([]web.MenuNode, len(ns))
		for i, n := range ns {
			out[i] = web.MenuNode{Key: n.Key, Read: n.Permissions.Read, Children: conv(n.Children)}
		}
		return out
	}
	return conv(tree), nil
}
