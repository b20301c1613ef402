package core

import (
	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/paging"
)

// Routes declares the notification endpoints (DESIGN §10). Every one is
// the caller's own: no menu key guards them. The socket is public to the
// guard because browsers cannot send a bearer token on a WebSocket; its
// one-time ticket authenticates it.
func (s *Service) Routes(r *httpx.Routes) {
	r.Get("/api/notifications", httpx.Authenticated, httpx.JSON(func(c *fiber.Ctx) (paging.Page[DTO], error) {
		req, err := httpx.ListRequest(c, ListSpec)
		if err != nil {
			return paging.Page[DTO]{}, err
		}
		unread, err := httpx.QueryBool(c, "unreadOnly", "UnreadOnly")
		if err != nil {
			return paging.Page[DTO]{}, err
		}
		return s.List(c.UserContext(), caller(c), unread != nil && *unread, req)
	}))
	r.Get("/api/notifications/unread-count", httpx.Authenticated, httpx.JSON(func(c *fiber.Ctx) (Count, error) {
		return s.UnreadCount(c.UserContext(), caller(c))
	}))
	r.Post("/api/notifications/read-all", httpx.Authenticated, httpx.JSON(func(c *fiber.Ctx) (Updated, error) {
		return s.MarkAllRead(c.UserContext(), caller(c))
	}))
	r.Post("/api/notifications/ws-ticket", httpx.Authenticated, httpx.JSON(func(c *fiber.Ctx) (TicketDTO, error) {
		return s.NewTicket(c.UserContext(), caller(c))
	}))
	r.Post("/api/notifications/:id/read", httpx.Authenticated, httpx.JSON(func(c *fiber.Ctx) (DTO, error) {
		return s.MarkRead(c.UserContext(), caller(c), c.Params("id"))
	}))
	r.Get("/api/notifications/ws", httpx.Public, s.Socket)
}

func caller(c *fiber.Ctx) string { return authn.Caller(c.UserContext()).UserID }
