package core

import (
	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
)

// Routes declares the designer's endpoints (DESIGN §4, §4.1). Handlers
// adapt HTTP to the Designer and hold no logic of their own.
func (d *Designer) Routes(r *httpx.Routes) {
	// The assignments come first: /api/workflows/:id would take them.
	r.Get("/api/workflows/assignments", httpx.Require("Workflows.Read"), httpx.JSON(func(c *fiber.Ctx) ([]AssignmentDTO, error) {
		return d.Assignments(c.UserContext())
	}))
	r.Put("/api/workflows/assignments", httpx.Require("Workflows.Update"), httpx.JSONBody(func(c *fiber.Ctx, in AssignRequest) (AssignmentDTO, error) {
		return d.Assign(c.UserContext(), caller(c), in)
	}))

	r.Get("/api/workflows", httpx.Require("Workflows.Read"), httpx.JSON(func(c *fiber.Ctx) ([]DefinitionDTO, error) {
		return d.List(c.UserContext(), c.Query("documentKind"))
	}))
	r.Post("/api/workflows", httpx.Require("Workflows.Create"), func(c *fiber.Ctx) error {
		var in CreateRequest
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		def, err := d.Create(c.UserContext(), caller(c), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, "/api/workflows/"+def.ID, def)
	})
	r.Get("/api/workflows/:id", httpx.Require("Workflows.Read"), httpx.JSON(func(c *fiber.Ctx) (DefinitionDTO, error) {
		return d.Get(c.UserContext(), c.Params("id"))
	}))
	r.Put("/api/workflows/:id", httpx.Require("Workflows.Update"), httpx.JSONBody(func(c *fiber.Ctx, in DraftRequest) (DefinitionDTO, error) {
		return d.Update(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Delete("/api/workflows/:id", httpx.Require("Workflows.Delete"), func(c *fiber.Ctx) error {
		if err := d.Delete(c.UserContext(), c.Params("id")); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})
	// Validating changes nothing, so reading definitions is enough.
	r.Post("/api/workflows/:id/validate", httpx.Require("Workflows.Read"), httpx.JSON(func(c *fiber.Ctx) (ValidationDTO, error) {
		return d.Validate(c.UserContext(), c.Params("id"))
	}))
	r.Post("/api/workflows/:id/publish", httpx.Require("Workflows.Update"), httpx.JSON(func(c *fiber.Ctx) (DefinitionDTO, error) {
		return d.Publish(c.UserContext(), caller(c), c.Params("id"))
	}))
}

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }
