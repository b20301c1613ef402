package runtime

import (
	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
)

// MigrateRequest is the body of POST /api/workflows/{id}/migrate.
type MigrateRequest struct {
	ToDefinitionID string `json:"toDefinitionId" validate:"required"`
	DryRun         bool   `json:"dryRun"`
}

// Routes declares the in-flight migration endpoints (DESIGN §4.1).
func (r *Runtime) Routes(rt *httpx.Routes) {
	rt.Get("/api/workflows/:id/in-flight", httpx.Require("Workflows.Read"), httpx.JSON(func(c *fiber.Ctx) (InFlight, error) {
		return r.InFlight(c.UserContext(), c.Params("id"))
	}))
	rt.Post("/api/workflows/:id/migrate", httpx.Require("Workflows.Update"), httpx.JSONBody(func(c *fiber.Ctx, in MigrateRequest) (InFlight, error) {
		if err := httpx.Validate(in); err != nil {
			return InFlight{}, err
		}
		return r.Migrate(c.UserContext(), authn.Caller(c.UserContext()), c.Params("id"), in.ToDefinitionID, in.DryRun)
	}))
}
