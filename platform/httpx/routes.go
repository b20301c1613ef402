package httpx

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/paging"
)

// Access says who may call a route. Every route declares one; there is no
// default, so a forgotten guard is a start-up error rather than an open door.
type Access struct {
	Public bool   // anyone, no token
	Policy string // "<menuKey>.<Action>"; empty with Public false = any signed-in user
}

var (
	// Public routes need no token (login, refresh, health).
	Public = Access{Public: true}
	// Authenticated routes need a valid token and no particular policy.
	Authenticated = Access{}
)

// Require returns the access rule of a permission policy, e.g. "Users.Read".
func Require(policy string) Access { return Access{Policy: policy} }

func (a Access) String() string {
	switch {
	case a.Public:
		return "public"
	case a.Policy == "":
		return "authenticated"
	}
	return a.Policy
}

// Guard turns an access rule into middleware. The identity module provides
// the implementation (tokens and the permission matrix); the kernel refuses
// to start when a non-public route exists and no guard does.
type Guard interface {
	Handler(a Access) fiber.Handler
}

// Route is one endpoint a module serves.
type Route struct {
	Method    string
	Path      string // absolute, e.g. "/api/users/:id"
	Access    Access
	RateLimit string // named rate-limit policy, e.g. "auth-login"; empty = global only
	Handler   fiber.Handler
}

// Routes collects a module's endpoints.
type Routes struct {
	list []Route
}

// Handle adds a route.
func (r *Routes) Handle(method, path string, access Access, h fiber.Handler) *Route {
	r.list = append(r.list, Route{Method: method, Path: path, Access: access, Handler: h})
	return &r.list[len(r.list)-1]
}

// Get adds a GET route.
func (r *Routes) Get(path string, a Access, h fiber.Handler) *Route {
	return r.Handle(fiber.MethodGet, path, a, h)
}

// Post adds a POST route.
func (r *Routes) Post(path string, a Access, h fiber.Handler) *Route {
	return r.Handle(fiber.MethodPost, path, a, h)
}

// Put adds a PUT route.
func (r *Routes) Put(path string, a Access, h fiber.Handler) *Route {
	return r.Handle(fiber.MethodPut, path, a, h)
}

// Delete adds a DELETE route.
func (r *Routes) Delete(path string, a Access, h fiber.Handler) *Route {
	return r.Handle(fiber.MethodDelete, path, a, h)
}

// List returns the collected routes.
func (r *Routes) List() []Route { return r.list }

// ListRequest parses the shared list parameters of the request.
func ListRequest(c *fiber.Ctx, spec paging.Spec) (paging.Request, error) {
	return paging.Parse(func(k string) string { return c.Query(k) }, spec)
}

// Created answers 201 with a Location header and body.
func Created(c *fiber.Ctx, location string, body any) error {
	c.Location(location)
	return c.Status(fiber.StatusCreated).JSON(body)
}

// NoContent answers 204.
func NoContent(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) }

// Describe renders a route for logs and errors.
func (r Route) Describe() string { return fmt.Sprintf("%s %s (%s)", r.Method, r.Path, r.Access) }
