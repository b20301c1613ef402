package core

import (
	"embed"
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authz"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/web"
)

// The administration pages of the identity module (DESIGN §12): users and
// the permission matrix as checkboxes. Handlers call the same service
// methods as the API's.

//go:embed templates
var pageFiles embed.FS

var pageTemplates = web.MustTemplates(pageFiles, "templates/*.html")

// Pages declares the administration pages.
func (s *Service) Pages(p *web.Pages) {
	p.Get("/admin/users", httpx.Require("Users.Read"), s.usersPage)
	p.Post("/admin/users", httpx.Require("Users.Create"), s.createUserPage)
	p.Get("/admin/users/:id", httpx.Require("Users.Read"), s.userPage)
	p.Post("/admin/users/:id", httpx.Require("Users.Update"), s.updateUserPage)
	p.Post("/admin/users/:id/roles", httpx.Require("Users.Update"), s.rolesPage)
	p.Post("/admin/users/:id/reset-password", httpx.Require("Users.Update"), s.resetPasswordPage)
	p.Post("/admin/users/:id/unlock", httpx.Require("Users.Update"), s.unlockPage)
	p.Get("/admin/permissions", httpx.Require("Permissions.Read"), s.permissionsPage)
	p.Post("/admin/permissions", httpx.Require("Permissions.Update"), s.savePermissionsPage)
	p.Menu(web.MenuEntry{Key: "Users", Path: "/admin/users", Label: "admin.users"})
	p.Menu(web.MenuEntry{Key: "Permissions", Path: "/admin/permissions", Label: "admin.permissions"})
	p.Messages("vi", pageMessagesVI)
	p.Messages("en", pageMessagesEN)
}

type usersData struct {
	Search, Role, Active string
	Roles                []string
	Page                 paging.Page[UserDTO]
	Pager                web.Pager
	New                  CreateUserRequest
}

func (s *Service) usersData(c *fiber.Ctx) (usersData, error) {
	d := usersData{Search: c.Query("search"), Role: c.Query("role"), Active: c.Query("isActive"), Roles: roleNames()}
	req, err := httpx.ListRequest(c, UserSpec)
	if err != nil {
		return d, err
	}
	active, err := httpx.QueryBool(c, "isActive", "IsActive")
	if err != nil {
		return d, err
	}
	if d.Role != "" && !slices.Contains(d.Roles, d.Role) {
		return d, apperr.FieldError("Role", "Unknown role.")
	}
	d.Page, err = s.ListUsers(c.UserContext(), userFilter{Search: req.Search, IsActive: active, Role: d.Role}, req)
	d.Pager = web.NewPager(c, d.Page)
	return d, err
}

func (s *Service) usersPage(c *fiber.Ctx) error {
	d, err := s.usersData(c)
	if err != nil {
		return web.RenderProblem(c, pageTemplates, "users", "admin.users", d, err)
	}
	return web.Render(c, pageTemplates, "users", "admin.users", d)
}

func (s *Service) createUserPage(c *fiber.Ctx) error {
	in := CreateUserRequest{Email: c.FormValue("email"), FullName: c.FormValue("fullName"), Password: c.FormValue("password"),
		Roles: formRoles(c)}
	id, err := s.CreateUser(c.UserContext(), caller(c), in)
	if err != nil {
		d, lerr := s.usersData(c)
		if lerr != nil {
			return lerr
		}
		in.Password = ""
		d.New = in
		return web.RenderProblem(c, pageTemplates, "users", "admin.users", d, err)
	}
	return web.RedirectWithFlash(c, "/admin/users/"+id, "flash.saved")
}

// formRoles reads the role checkboxes, in the roles' order.
func formRoles(c *fiber.Ctx) []string {
	var out []string
	for _, r := range roleNames() {
		if c.FormValue("role."+r) != "" {
			out = append(out, r)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// roleNames lists the twelve roles in the seed's order, Admin first.
func roleNames() []string {
	out := make([]string, len(seedRoles))
	for i, r := range seedRoles {
		out[i] = r.Name
	}
	return out
}

type userData struct {
	UserDTO
	Roles []string
}

func (s *Service) userPage(c *fiber.Ctx) error {
	u, err := s.GetUser(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	return web.Render(c, pageTemplates, "user", "admin.user", userData{UserDTO: u, Roles: roleNames()})
}

// userAgain shows the user page with a problem, read again.
func (s *Service) userAgain(c *fiber.Ctx, cause error) error {
	u, err := s.GetUser(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	return web.RenderProblem(c, pageTemplates, "user", "admin.user", userData{UserDTO: u, Roles: roleNames()}, cause)
}

func (s *Service) updateUserPage(c *fiber.Ctx) error {
	active := c.FormValue("isActive") != ""
	in := UpdateUserRequest{FullName: c.FormValue("fullName"), IsActive: &active}
	if v, err := strconv.Atoi(c.FormValue("version")); err == nil {
		in.Version = &v
	}
	if _, err := s.UpdateUser(c.UserContext(), caller(c), c.Params("id"), in); err != nil {
		return s.userAgain(c, err)
	}
	return web.RedirectWithFlash(c, "/admin/users/"+c.Params("id"), "flash.saved")
}

func (s *Service) rolesPage(c *fiber.Ctx) error {
	if _, err := s.SetRoles(c.UserContext(), caller(c), c.Params("id"), SetRolesRequest{Roles: formRoles(c)}); err != nil {
		return s.userAgain(c, err)
	}
	return web.RedirectWithFlash(c, "/admin/users/"+c.Params("id"), "flash.saved")
}

func (s *Service) resetPasswordPage(c *fiber.Ctx) error {
	err := s.ResetPassword(c.UserContext(), caller(c), c.Params("id"), ResetPasswordRequest{NewPassword: c.FormValue("newPassword")})
	if err != nil {
		return s.userAgain(c, err)
	}
	return web.RedirectWithFlash(c, "/admin/users/"+c.Params("id"), "flash.saved")
}

func (s *Service) unlockPage(c *fiber.Ctx) error {
	if err := s.Unlock(c.UserContext(), caller(c), c.Params("id")); err != nil {
		return s.userAgain(c, err)
	}
	return web.RedirectWithFlash(c, "/admin/users/"+c.Params("id"), "flash.saved")
}

// matrixRow is one menu key's flags for the chosen role.
type matrixRow struct {
	Key   string
	Flags map[string]bool // action → granted
}

type permissionsData struct {
	Role    string
	Roles   []string
	Actions []string
	Rows    []matrixRow
	Locked  bool // the Admin role keeps every permission
}

func (s *Service) permissionsData(c *fiber.Ctx, role string) (permissionsData, error) {
	d := permissionsData{Role: role, Roles: roleNames(), Actions: authz.Actions, Locked: authz.PassesEveryPolicy(role)}
	rows, err := s.Permissions(c.UserContext(), role)
	if err != nil {
		return d, err
	}
	for _, r := range rows {
		d.Rows = append(d.Rows, matrixRow{Key: r.MenuKey, Flags: map[string]bool{
			authz.Read: r.CanRead, authz.Create: r.CanCreate, authz.Update: r.CanUpdate, authz.Delete: r.CanDelete}})
	}
	slices.SortFunc(d.Rows, func(a, b matrixRow) int { return s.menuOrder(a.Key) - s.menuOrder(b.Key) })
	return d, nil
}

// menuOrder places a key where the menu tree has it.
func (s *Service) menuOrder(key string) int {
	return slices.IndexFunc(s.menus, func(m kernel.Menu) bool { return m.Key == key })
}

func (s *Service) permissionsPage(c *fiber.Ctx) error {
	role := c.Query("role", "Drafter")
	d, err := s.permissionsData(c, role)
	if err != nil {
		return web.RenderProblem(c, pageTemplates, "permissions", "admin.permissions", d, err)
	}
	return web.Render(c, pageTemplates, "permissions", "admin.permissions", d)
}

// savePermissionsPage saves the rows whose checkboxes changed, one
// PUT /api/permissions each.
func (s *Service) savePermissionsPage(c *fiber.Ctx) error {
	role := c.FormValue("role")
	before, err := s.permissionsData(c, role)
	if err != nil {
		return web.RenderProblem(c, pageTemplates, "permissions", "admin.permissions", before, err)
	}
	for _, row := range before.Rows {
		on := func(a string) *bool { v := c.FormValue("p."+row.Key+"."+a) != ""; return &v }
		in := PermissionRequest{Role: role, MenuKey: row.Key, CanRead: on(authz.Read), CanCreate: on(authz.Create),
			CanUpdate: on(authz.Update), CanDelete: on(authz.Delete)}
		if *in.CanRead == row.Flags[authz.Read] && *in.CanCreate == row.Flags[authz.Create] &&
			*in.CanUpdate == row.Flags[authz.Update] && *in.CanDelete == row.Flags[authz.Delete] {
			continue
		}
		if _, err := s.SavePermission(c.UserContext(), caller(c), in); err != nil {
			d, derr := s.permissionsData(c, role)
			if derr != nil {
				return derr
			}
			return web.RenderProblem(c, pageTemplates, "permissions", "admin.permissions", d, err)
		}
	}
	return web.RedirectWithFlash(c, "/admin/permissions?role="+role, "flash.saved")
}
