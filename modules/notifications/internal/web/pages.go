// Package web is the notifications page (the bell's target) and the bell's
// service (DESIGN §10, §12).
package web

import (
	"context"
	"embed"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/notifications/internal/core"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/web"
)

//go:embed templates
var files embed.FS

var pages = web.MustTemplates(files, "templates/*.html")

// Register declares the notifications page and its messages.
func Register(p *web.Pages, svc *core.Service) {
	h := handlers{svc}
	p.Get("/notifications", httpx.Authenticated, h.list)
	p.Post("/notifications/read-all", httpx.Authenticated, h.readAll)
	p.Post("/notifications/:id/read", httpx.Authenticated, h.read)
	p.Messages("vi", map[string]string{
		"notifications.title": "Thông báo", "notifications.readall": "Đánh dấu tất cả đã đọc",
		"notifications.read": "Đã đọc", "notifications.open": "Mở", "notifications.unread": "Chưa đọc",
		"notifications.empty": "Không có thông báo nào.",
	})
	p.Messages("en", map[string]string{
		"notifications.title": "Notifications", "notifications.readall": "Mark all read",
		"notifications.read": "Mark read", "notifications.open": "Open", "notifications.unread": "Unread",
		"notifications.empty": "No notifications.",
	})
}

type handlers struct{ svc *core.Service }

type listData struct {
	Page  paging.Page[core.DTO]
	Pager web.Pager
}

func (h handlers) list(c *fiber.Ctx) error {
	req, err := httpx.ListRequest(c, core.ListSpec)
	if err != nil {
		return err
	}
	p := authn.Caller(c.UserContext())
	page, err := h.svc.List(c.UserContext(), p.UserID, c.Query("unreadOnly") == "true", req)
	if err != nil {
		return err
	}
	return web.Render(c, pages, "list", "notifications.title", listData{Page: page, Pager: web.NewPager(c, page)})
}

func (h handlers) readAll(c *fiber.Ctx) error {
	if _, err := h.svc.MarkAllRead(c.UserContext(), authn.Caller(c.UserContext()).UserID); err != nil {
		return err
	}
	return web.Redirect(c, "/notifications")
}

// read marks one read and opens what it is about when the page knows the
// address (a contract).
func (h handlers) read(c *fiber.Ctx) error {
	n, err := h.svc.MarkRead(c.UserContext(), authn.Caller(c.UserContext()).UserID, c.Params("id"))
	if err != nil {
		return err
	}
	return web.Redirect(c, Link(n))
}

// Link is the page of what a notification is about.
func Link(n core.DTO) string {
	switch n.EntityType {
	case "contract", "Contract":
		return "/contracts/" + n.EntityID
	case "purchaseEvaluation", "PurchaseEvaluation":
		return "/purchase-evaluations/" + n.EntityID
	}
	return "/notifications"
}

// Bell is web.Bell over the service.
type Bell struct{ Svc *core.Service }

var _ web.Bell = Bell{}

// UnreadCount is the user's unread count.
func (b Bell) UnreadCount(ctx context.Context, userID string) (int64, error) {
	n, err := b.Svc.UnreadCount(ctx, userID)
	return n.Count, err
}

// Ticket is POST /api/notifications/ws-ticket for the page's user.
func (b Bell) Ticket(ctx context.Context, p authn.Principal) (string, error) {
	t, err := b.Svc.NewTicket(ctx, p.UserID)
	return t.Ticket, err
}
