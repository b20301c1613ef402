package web

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
)

// Sessions is what the pages need of the identity module: signing in with
// the same lockout as POST /api/auth/login, and resuming a session from its
// cookie. A session is a refresh-token family: signing out, a password
// change, a role change, disabling the user or presenting an already rotated
// token of the family ends it exactly as it ends the API's tokens. The
// identity module provides it (kernel.Provide[web.Sessions]).
type Sessions interface {
	// SignIn checks the credentials as the API's login does and starts a
	// family; the token goes into the session cookie.
	SignIn(ctx context.Context, email, password string) (token string, p authn.Principal, err error)
	// Resume returns the signed-in user of a session token, or an
	// apperr Unauthorized error once the session has ended.
	Resume(ctx context.Context, token string) (authn.Principal, error)
	// SignOut revokes the token's family.
	SignOut(ctx context.Context, token string) error
	// Allowed decides a policy ("Contracts.Read") as the API's guard does.
	Allowed(roles []string, policy string) bool
	// ReadableMenus returns the menu keys the roles can read, as the tree of
	// GET /api/menus/me (a parent appears when a child is readable).
	ReadableMenus(ctx context.Context, roles []string) ([]MenuNode, error)
}

// MenuNode is one entry of the readable menu tree.
type MenuNode struct {
	Key      string
	Read     bool // false for a parent shown only for its readable children
	Children []MenuNode
}

// Bell is what the layout's notification bell needs; the notifications
// module provides it (kernel.Provide[web.Bell]). Without it the layout shows
// no bell.
type Bell interface {
	// UnreadCount is the user's number of unread notifications.
	UnreadCount(ctx context.Context, userID string) (int64, error)
	// Ticket issues a one-time WebSocket ticket (as POST
	// /api/notifications/ws-ticket does) for the signed-in user.
	Ticket(ctx context.Context, p authn.Principal) (string, error)
}

// Cookie names.
const (
	cookieSession = "cf_session"
	cookieCSRF    = "cf_csrf"
	cookieLang    = "cf_lang"
	cookieFlash   = "cf_flash"
)

// Keys of the values the page middleware leaves on a request.
const (
	localUser  = "web.user"
	localToken = "web.token"
	localLang  = "web.lang"
	localCSRF  = "web.csrf"
)

// User returns the signed-in user of a page request.
func User(c *fiber.Ctx) (authn.Principal, bool) {
	p, ok := c.Locals(localUser).(authn.Principal)
	return p, ok
}

// Lang returns the language of a page request: "vi" or "en".
func Lang(c *fiber.Ctx) string {
	if l, ok := c.Locals(localLang).(string); ok {
		return l
	}
	return "vi"
}

// setCookie writes one of the service's cookies: HttpOnly, SameSite=Strict,
// Secure in production; maxAge < 0 deletes it, 0 keeps it for the browser
// session.
func (s *Server) setCookie(c *fiber.Ctx, name, value string, maxAge int) {
	ck := &fiber.Cookie{Name: name, Value: value, Path: "/", HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode,
		Secure: s.opts.Production}
	if maxAge < 0 {
		ck.Value, ck.MaxAge, ck.SessionOnly = "", -1, false
	} else if maxAge > 0 {
		ck.MaxAge = maxAge
	} else {
		ck.SessionOnly = true
	}
	c.Cookie(ck)
}

// resume sets the signed-in user from the session cookie, if any; an ended
// session's cookie is dropped.
func (s *Server) resume(c *fiber.Ctx) error {
	if _, done := c.Locals(localUser).(authn.Principal); done {
		return nil
	}
	token := c.Cookies(cookieSession)
	if token == "" {
		return nil
	}
	p, err := s.opts.Sessions.Resume(c.UserContext(), token)
	if apperr.KindOf(err) == apperr.KindUnauthorized {
		s.setCookie(c, cookieSession, "", -1)
		return nil
	}
	if err != nil {
		return err
	}
	c.Locals(localUser, p)
	c.Locals(localToken, token)
	c.SetUserContext(authn.WithPrincipal(c.UserContext(), p))
	return nil
}
