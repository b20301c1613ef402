package web

import (
	"io/fs"
	"net/http"
	"net/url"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
)

// loginForm shows the sign-in page; a signed-in user goes on to next.
func (s *Server) loginForm(c *fiber.Ctx) error {
	if _, ok := User(c); ok {
		return Redirect(c, safeNext(c.Query("next")))
	}
	return Render(c, platformPages, "login", "login.title", loginData{Next: safeNext(c.Query("next"))})
}

type loginData struct {
	Email, Next string
}

// login signs in with the same checks, lockout and rate limit as POST
// /api/auth/login and returns to where the user was going.
func (s *Server) login(c *fiber.Ctx) error {
	data := loginData{Email: c.FormValue("email"), Next: safeNext(c.FormValue("next"))}
	token, p, err := s.opts.Sessions.SignIn(c.UserContext(), data.Email, c.FormValue("password"))
	if err != nil {
		if apperr.KindOf(err) == apperr.KindUnauthorized {
			err = apperr.BadRequest("invalid_credentials", "The email or password is incorrect.")
		}
		return RenderProblem(c, platformPages, "login", "login.title", data, err)
	}
	s.setCookie(c, cookieSession, token, 0)
	s.renewCSRF(c)
	if lang, err := s.prefs.get(c.UserContext(), p.UserID); err == nil && lang == "" {
		// A language chosen before signing in becomes the user's choice.
		if l := c.Cookies(cookieLang); slices.Contains(Languages, l) {
			_ = s.prefs.set(c.UserContext(), p.UserID, l)
		}
	}
	return Redirect(c, data.Next)
}

// logout ends the session's token family and forgets the cookie.
func (s *Server) logout(c *fiber.Ctx) error {
	if token, ok := c.Locals(localToken).(string); ok {
		if err := s.opts.Sessions.SignOut(c.UserContext(), token); err != nil {
			return err
		}
	}
	s.setCookie(c, cookieSession, "", -1)
	s.renewCSRF(c)
	return Redirect(c, "/login")
}

// setLanguage saves the chosen language for the signed-in user (and in a
// cookie for the sign-in page) and returns to the page the form was on.
func (s *Server) setLanguage(c *fiber.Ctx) error {
	lang := c.FormValue("lang")
	if !slices.Contains(Languages, lang) {
		return apperr.FieldError("Lang", "Must be one of: vi, en.")
	}
	if p, ok := User(c); ok {
		if err := s.prefs.set(c.UserContext(), p.UserID, lang); err != nil {
			return err
		}
	}
	s.setCookie(c, cookieLang, lang, 365*24*3600)
	back := "/"
	if ref, err := url.Parse(c.Get(fiber.HeaderReferer)); err == nil && ref.Host == string(c.Request().Host()) {
		back = safeNext(ref.RequestURI())
	}
	if next := c.FormValue("next"); next != "" {
		back = safeNext(next)
	}
	return Redirect(c, back)
}

// ticket issues the bell's one-time WebSocket ticket for the session's user.
func (s *Server) ticket(c *fiber.Ctx) error {
	p, _ := User(c)
	t, err := s.opts.Bell.Ticket(c.UserContext(), p)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"ticket": t})
}

// language is the signed-in user's saved choice, else the cf_lang cookie,
// else business.language.
func (s *Server) language(c *fiber.Ctx) string {
	if p, ok := User(c); ok {
		if lang, err := s.prefs.get(c.UserContext(), p.UserID); err == nil && lang != "" {
			return lang
		}
	}
	if l := c.Cookies(cookieLang); slices.Contains(Languages, l) {
		return l
	}
	return s.opts.DefaultLang
}

func httpFS(f fs.FS) http.FileSystem { return http.FS(f) }
