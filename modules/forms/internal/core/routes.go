package core

import "github.com/contractflow/contractflow/platform/httpx"

// Routes declares the module's endpoints and who may call them.
func (s *Service) Routes(r *httpx.Routes) {
	h := handlers{svc: s}
	r.Get("/api/forms/templates", httpx.Require("Forms.Read"), h.list)
	r.Post("/api/forms/templates", httpx.Require("Forms.Create"), h.create)
	r.Get("/api/forms/templates/:id", httpx.Require("Forms.Read"), h.get)
	r.Put("/api/forms/templates/:id", httpx.Require("Forms.Update"), h.update)
	r.Post("/api/forms/templates/:id/render", httpx.Require("Forms.Read"), h.render)
	r.Put("/api/forms/templates/:id/file", httpx.Require("Forms.Update"), h.replaceFile)
}
