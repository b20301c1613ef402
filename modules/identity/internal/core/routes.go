package core

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/paging"
)

// Routes declares the module's endpoints and who may call them. Handlers
// adapt HTTP to the service and hold no logic of their own.
func (s *Service) Routes(r *httpx.Routes) {
	r.Post("/api/auth/login", httpx.Public, httpx.JSONBody(func(c *fiber.Ctx, in LoginRequest) (TokenResponse, error) {
		return s.Login(c.UserContext(), in)
	})).RateLimit = kernel.RateLimitLogin
	r.Post("/api/auth/refresh", httpx.Public, httpx.JSONBody(func(c *fiber.Ctx, in RefreshRequest) (TokenResponse, error) {
		return s.Refresh(c.UserContext(), in)
	}))
	r.Post("/api/auth/logout", httpx.Authenticated, httpx.NoContentBody(func(c *fiber.Ctx, in RefreshRequest) error {
		return s.Logout(c.UserContext(), caller(c), in)
	}))
	r.Get("/api/auth/me", httpx.Authenticated, httpx.JSON(func(c *fiber.Ctx) (MeDTO, error) {
		return s.Me(c.UserContext(), caller(c))
	}))
	r.Post("/api/auth/change-password", httpx.Authenticated, httpx.NoContentBody(func(c *fiber.Ctx, in ChangePasswordRequest) error {
		return s.ChangePassword(c.UserContext(), caller(c), in)
	}))

	r.Get("/api/users", httpx.Require("Users.Read"), httpx.JSON(s.listUsers))
	r.Post("/api/users", httpx.Require("Users.Create"), s.createUser)
	r.Get("/api/users/:id", httpx.Require("Users.Read"), httpx.JSON(func(c *fiber.Ctx) (UserDTO, error) {
		return s.GetUser(c.UserContext(), c.Params("id"))
	}))
	r.Put("/api/users/:id", httpx.Require("Users.Update"), httpx.JSONBody(func(c *fiber.Ctx, in UpdateUserRequest) (UserDTO, error) {
		return s.UpdateUser(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Put("/api/users/:id/roles", httpx.Require("Users.Update"), httpx.JSONBody(func(c *fiber.Ctx, in SetRolesRequest) (UserDTO, error) {
		return s.SetRoles(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Post("/api/users/:id/reset-password", httpx.Require("Users.Update"), httpx.NoContentBody(func(c *fiber.Ctx, in ResetPasswordRequest) error {
		return s.ResetPassword(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Post("/api/users/:id/unlock", httpx.Require("Users.Update"), func(c *fiber.Ctx) error {
		if err := s.Unlock(c.UserContext(), caller(c), c.Params("id")); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})

	r.Get("/api/roles", httpx.Authenticated, httpx.JSON(func(c *fiber.Ctx) ([]RoleDTO, error) {
		return s.Roles(c.UserContext())
	}))
	r.Get("/api/menus/me", httpx.Authenticated, httpx.JSON(func(c *fiber.Ctx) ([]MenuNode, error) {
		return s.MenuTree(c.UserContext(), caller(c).Roles, true)
	}))
	r.Get("/api/menus", httpx.Require("Permissions.Read"), httpx.JSON(func(c *fiber.Ctx) ([]MenuNode, error) {
		return s.MenuTree(c.UserContext(), []string{authn.RoleAdmin}, false)
	}))
	r.Get("/api/permissions", httpx.Require("Permissions.Read"), httpx.JSON(func(c *fiber.Ctx) ([]PermissionDTO, error) {
		return s.Permissions(c.UserContext(), c.Query("role"))
	}))
	r.Put("/api/permissions", httpx.Require("Permissions.Update"), httpx.JSONBody(func(c *fiber.Ctx, in PermissionRequest) (PermissionDTO, error) {
		return s.SavePermission(c.UserContext(), caller(c), in)
	}))
}

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

func (s *Service) listUsers(c *fiber.Ctx) (paging.Page[UserDTO], error) {
	req, err := httpx.ListRequest(c, UserSpec)
	if err != nil {
		return paging.Page[UserDTO]{}, err
	}
	active, err := httpx.QueryBool(c, "isActive", "IsActive")
	if err != nil {
		return paging.Page[UserDTO]{}, err
	}
	f := userFilter{Search: req.Search, IsActive: active, Role: c.Query("role")}
	if f.Role != "" {
		if _, err := s.roleIDs(c.UserContext(), []string{f.Role}); err != nil {
			if apperr.KindOf(err) == apperr.KindValidation {
				return paging.Page[UserDTO]{}, apperr.FieldError("Role", fmt.Sprintf("Unknown role %q.", f.Role))
			}
			return paging.Page[UserDTO]{}, err
		}
	}
	return s.ListUsers(c.UserContext(), f, req)
}

func (s *Service) createUser(c *fiber.Ctx) error {
	var in CreateUserRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	id, err := s.CreateUser(c.UserContext(), caller(c), in)
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/users/"+id, fiber.Map{"id": id})
}
