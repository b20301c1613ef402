package core

import (
	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/paging"
)

// Routes declares the eleven budget endpoints (DESIGN §8). Handlers adapt
// HTTP to the service and hold no logic of their own; bodies are decoded
// without their rules so that an unknown budget is 404 before a bad body
// is 400.
func (s *Service) Routes(r *httpx.Routes) {
	read, create, update, del := httpx.Require("Budgets.Read"), httpx.Require("Budgets.Create"),
		httpx.Require("Budgets.Update"), httpx.Require("Budgets.Delete")
	r.Get("/api/budgets", read, httpx.JSON(func(c *fiber.Ctx) (paging.Page[BudgetDTO], error) {
		req, err := httpx.ListRequest(c, ListSpec)
		if err != nil {
			return paging.Page[BudgetDTO]{}, err
		}
		f, err := parseListFilter(func(k string) string { return c.Query(k) })
		if err != nil {
			return paging.Page[BudgetDTO]{}, err
		}
		return s.List(c.UserContext(), f, req)
	}))
	r.Post("/api/budgets", create, func(c *fiber.Ctx) error {
		var in BudgetInput
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		d, err := s.Create(c.UserContext(), caller(c), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, "/api/budgets/"+d.ID, d)
	})
	r.Get("/api/budgets/:id", read, httpx.JSON(func(c *fiber.Ctx) (Detail, error) {
		return s.Get(c.UserContext(), c.Params("id"))
	}))
	r.Put("/api/budgets/:id", update, httpx.JSONBody(func(c *fiber.Ctx, in BudgetInput) (Detail, error) {
		return s.Update(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Delete("/api/budgets/:id", del, func(c *fiber.Ctx) error {
		if err := s.Delete(c.UserContext(), caller(c), c.Params("id")); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})
	r.Post("/api/budgets/:id/approve", update, httpx.JSON(func(c *fiber.Ctx) (Detail, error) {
		return s.Approve(c.UserContext(), caller(c), c.Params("id"))
	}))
	r.Post("/api/budgets/:id/lines", update, func(c *fiber.Ctx) error {
		var in LineInput
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		l, err := s.CreateLine(c.UserContext(), caller(c), c.Params("id"), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, "/api/budgets/"+c.Params("id"), l)
	})
	r.Put("/api/budgets/:id/lines/:lineId", update, httpx.JSONBody(func(c *fiber.Ctx, in LineInput) (LineDTO, error) {
		return s.UpdateLine(c.UserContext(), caller(c), c.Params("id"), c.Params("lineId"), in)
	}))
	r.Delete("/api/budgets/:id/lines/:lineId", update, func(c *fiber.Ctx) error {
		if err := s.DeleteLine(c.UserContext(), caller(c), c.Params("id"), c.Params("lineId")); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})
	r.Post("/api/budgets/:id/lines/:lineId/adjustments", update, func(c *fiber.Ctx) error {
		var in AdjustmentInput
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		a, err := s.Adjust(c.UserContext(), caller(c), c.Params("id"), c.Params("lineId"), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, "/api/budgets/"+c.Params("id"), a)
	})
	r.Post("/api/budgets/:id/lines/:lineId/commitments", update, func(c *fiber.Ctx) error {
		var in CommitmentInput
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		out, err := s.Commit(c.UserContext(), caller(c), c.Params("id"), c.Params("lineId"), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, "/api/budgets/"+c.Params("id"), out)
	})
}

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }
