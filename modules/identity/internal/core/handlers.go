package core

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
)

// handlers adapt HTTP to the service; they hold no logic of their own.
type handlers struct{ svc *Service }

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

func (h handlers) login(c *fiber.Ctx) error {
	var in LoginRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	out, err := h.svc.Login(c.UserContext(), in)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) refresh(c *fiber.Ctx) error {
	var in RefreshRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	out, err := h.svc.Refresh(c.UserContext(), in)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) logout(c *fiber.Ctx) error {
	var in RefreshRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	if err := h.svc.Logout(c.UserContext(), caller(c), in); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

func (h handlers) me(c *fiber.Ctx) error {
	out, err := h.svc.Me(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) changePassword(c *fiber.Ctx) error {
	var in ChangePasswordRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	if err := h.svc.ChangePassword(c.UserContext(), caller(c), in); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

func (h handlers) listUsers(c *fiber.Ctx) error {
	req, err := httpx.ListRequest(c, UserSpec)
	if err != nil {
		return err
	}
	active, err := httpx.QueryBool(c, "isActive", "IsActive")
	if err != nil {
		return err
	}
	f := userFilter{Search: req.Search, IsActive: active, Role: c.Query("role")}
	if f.Role != "" {
		if _, err := h.svc.roleIDs(c.UserContext(), []string{f.Role}); err != nil {
			if apperr.KindOf(err) == apperr.KindValidation {
				return apperr.FieldError("Role", fmt.Sprintf("Unknown role %q.", f.Role))
			}
			return err
		}
	}
	page, err := h.svc.ListUsers(c.UserContext(), f, req)
	if err != nil {
		return err
	}
	return c.JSON(page)
}

func (h handlers) getUser(c *fiber.Ctx) error {
	out, err := h.svc.GetUser(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) createUser(c *fiber.Ctx) error {
	var in CreateUserRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	id, err := h.svc.CreateUser(c.UserContext(), caller(c), in)
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/users/"+id, fiber.Map{"id": id})
}

func (h handlers) updateUser(c *fiber.Ctx) error {
	var in UpdateUserRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	out, err := h.svc.UpdateUser(c.UserContext(), caller(c), c.Params("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) setRoles(c *fiber.Ctx) error {
	var in SetRolesRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	out, err := h.svc.SetRoles(c.UserContext(), caller(c), c.Params("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) resetPassword(c *fiber.Ctx) error {
	var in ResetPasswordRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	if err := h.svc.ResetPassword(c.UserContext(), caller(c), c.Params("id"), in); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

func (h handlers) unlock(c *fiber.Ctx) error {
	if err := h.svc.Unlock(c.UserContext(), caller(c), c.Params("id")); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

func (h handlers) roles(c *fiber.Ctx) error {
	out, err := h.svc.Roles(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) myMenus(c *fiber.Ctx) error {
	out, err := h.svc.MenuTree(c.UserContext(), caller(c).Roles, true)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) allMenus(c *fiber.Ctx) error {
	out, err := h.svc.MenuTree(c.UserContext(), []string{authn.RoleAdmin}, false)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) permissions(c *fiber.Ctx) error {
	out, err := h.svc.Permissions(c.UserContext(), c.Query("role"))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h handlers) savePermission(c *fiber.Ctx) error {
	var in PermissionRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	out, err := h.svc.SavePermission(c.UserContext(), caller(c), in)
	if err != nil {
		return err
	}
	return c.JSON(out)
}
