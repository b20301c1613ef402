package core

import "github.com/contractflow/contractflow/platform/httpx"

// Routes declares the contract endpoints (DESIGN §5). Moves need only
// Contracts.Read: the workflow's roles decide who may make them.
func (s *Service) Routes(r *httpx.Routes, maxUploadBytes int64) {
	h := handlers{svc: s, maxBytes: maxUploadBytes}
	r.Get("/api/contracts", httpx.Require("Contracts.Read"), h.list)
	r.Get("/api/contracts/inbox", httpx.Require("Contracts.Read"), h.inbox)
	r.Post("/api/contracts", httpx.Require("Contracts.Create"), h.create)
	r.Get("/api/contracts/:id", httpx.Require("Contracts.Read"), h.get)
	r.Put("/api/contracts/:id", httpx.Require("Contracts.Update"), h.update)
	r.Delete("/api/contracts/:id", httpx.Require("Contracts.Delete"), h.delete)
	r.Post("/api/contracts/:id/transitions", httpx.Require("Contracts.Read"), h.transition)
	r.Post("/api/contracts/:id/comments", httpx.Require("Contracts.Read"), h.comment)
	r.Post("/api/contracts/:id/attachments", httpx.Require("Contracts.Update"), h.upload)
	r.Get("/api/contracts/:id/attachments/:attachmentId", httpx.Require("Contracts.Read"), h.download)
	r.Delete("/api/contracts/:id/attachments/:attachmentId", httpx.Require("Contracts.Update"), h.deleteAttachment)
	r.Post("/api/contracts/:id/draft-export", httpx.Require("Contracts.Update"), h.draftExport)
}
