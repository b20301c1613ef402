package core

import (
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
)

// Routes declares the module's endpoints and who may call them.
func (s *Service) Routes(r *httpx.Routes) {
	h := handlers{svc: s}
	r.Post("/api/auth/login", httpx.Public, h.login).RateLimit = kernel.RateLimitLogin
	r.Post("/api/auth/refresh", httpx.Public, h.refresh)
	r.Post("/api/auth/logout", httpx.Authenticated, h.logout)
	r.Get("/api/auth/me", httpx.Authenticated, h.me)
	r.Post("/api/auth/change-password", httpx.Authenticated, h.changePassword)

	r.Get("/api/users", httpx.Require("Users.Read"), h.listUsers)
	r.Post("/api/users", httpx.Require("Users.Create"), h.createUser)
	r.Get("/api/users/:id", httpx.Require("Users.Read"), h.getUser)
	r.Put("/api/users/:id", httpx.Require("Users.Update"), h.updateUser)
	r.Put("/api/users/:id/roles", httpx.Require("Users.Update"), h.setRoles)
	r.Post("/api/users/:id/reset-password", httpx.Require("Users.Update"), h.resetPassword)
	r.Post("/api/users/:id/unlock", httpx.Require("Users.Update"), h.unlock)

	r.Get("/api/roles", httpx.Authenticated, h.roles)
	r.Get("/api/menus/me", httpx.Authenticated, h.myMenus)
	r.Get("/api/menus", httpx.Require("Permissions.Read"), h.allMenus)
	r.Get("/api/permissions", httpx.Require("Permissions.Read"), h.permissions)
	r.Put("/api/permissions", httpx.Require("Permissions.Update"), h.savePermission)
}
