package core

import (
	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/httpx"
)

// Routes declares the module's endpoints and who may call them.
func (s *Service) Routes(r *httpx.Routes) {
	h := handlers{svc: s}
	r.Get("/api/forms/templates", httpx.Require("Forms.Read"), h.list)
	r.Post("/api/forms/templates", httpx.Require("Forms.Create"), h.create)
	r.Get("/api/forms/templates/:id", httpx.Require("Forms.Read"), httpx.JSON(func(c *fiber.Ctx) (TemplateDetail, error) {
		return s.GetDetail(c.UserContext(), c.Params("id"))
	}))
	r.Put("/api/forms/templates/:id", httpx.Require("Forms.Update"), httpx.JSONBody(func(c *fiber.Ctx, in UpdateRequest) (TemplateDTO, error) {
		return s.Update(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Post("/api/forms/templates/:id/render", httpx.Require("Forms.Read"), h.render)
	r.Get("/api/forms/templates/:id/file", httpx.Require("Forms.Read"), h.file)
	r.Put("/api/forms/templates/:id/file", httpx.Require("Forms.Update"), h.replaceFile)
}
