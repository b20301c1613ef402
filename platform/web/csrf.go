package web

import (
	"crypto/rand"
	"crypto/subtle"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
)

// CSRF defence for every POST: the form field csrf_token (or the header
// X-CSRF-Token, for the page's own scripts) must equal the cf_csrf cookie,
// which a foreign site can neither read nor set (HttpOnly, SameSite=Strict),
// and an Origin header, when the browser sends one, must be this site's.

// FieldCSRF is the hidden form field every state-changing form carries.
const FieldCSRF = "csrf_token"

// HeaderCSRF carries the token on a script's POST.
const HeaderCSRF = "X-CSRF-Token"

// csrfToken returns the request's CSRF token, creating the cookie when the
// browser has none yet.
func (s *Server) csrfToken(c *fiber.Ctx) string {
	if t, ok := c.Locals(localCSRF).(string); ok {
		return t
	}
	t := c.Cookies(cookieCSRF)
	if len(t) < 20 {
		t = rand.Text()
		s.setCookie(c, cookieCSRF, t, 0)
	}
	c.Locals(localCSRF, t)
	return t
}

// renewCSRF gives a new token at sign-in, so a token seen before it is
// worthless after.
func (s *Server) renewCSRF(c *fiber.Ctx) {
	t := rand.Text()
	s.setCookie(c, cookieCSRF, t, 0)
	c.Locals(localCSRF, t)
}

// checkCSRF refuses (403) a POST without the right token or from a foreign
// origin.
func (s *Server) checkCSRF(c *fiber.Ctx) error {
	if origin := c.Get(fiber.HeaderOrigin); origin != "" && !s.sameOrigin(c, origin) {
		return apperr.New(apperr.KindForbidden, "csrf_origin", "The form was sent from another site.")
	}
	cookie := c.Cookies(cookieCSRF)
	sent := c.FormValue(FieldCSRF)
	if sent == "" {
		sent = c.Get(HeaderCSRF)
	}
	if cookie == "" || sent == "" || subtle.ConstantTimeCompare([]byte(cookie), []byte(sent)) != 1 {
		return apperr.New(apperr.KindForbidden, "csrf_token", "The form has expired or did not come from this site; reload the page and try again.")
	}
	return nil
}

// sameOrigin compares the Origin's host with the host the request was sent
// to, or with one of allowedOrigins.
func (s *Server) sameOrigin(c *fiber.Ctx, origin string) bool {
	for _, o := range s.opts.AllowedOrigins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" and the like
	}
	return strings.EqualFold(u.Host, string(c.Request().Host()))
}
