package core

import (
	"fmt"
	"io"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/paging"
)

// Routes declares the contract endpoints (DESIGN §5). Moves need only
// Contracts.Read: the workflow's roles decide who may make them. Handlers
// adapt HTTP to the service and hold no logic of their own.
func (s *Service) Routes(r *httpx.Routes, maxUploadBytes int64) {
	r.Get("/api/contracts", httpx.Require("Contracts.Read"), httpx.JSON(s.list))
	r.Get("/api/contracts/inbox", httpx.Require("Contracts.Read"), httpx.JSON(func(c *fiber.Ctx) (paging.Page[InboxItem], error) {
		req, err := httpx.ListRequest(c, InboxSpec)
		if err != nil {
			return paging.Page[InboxItem]{}, err
		}
		return s.Inbox(c.UserContext(), caller(c), req)
	}))
	r.Post("/api/contracts", httpx.Require("Contracts.Create"), func(c *fiber.Ctx) error {
		var in CreateRequest
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		d, err := s.Create(c.UserContext(), caller(c), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, "/api/contracts/"+d.ID, d)
	})
	r.Get("/api/contracts/:id", httpx.Require("Contracts.Read"), httpx.JSON(func(c *fiber.Ctx) (Detail, error) {
		return s.Get(c.UserContext(), caller(c), c.Params("id"))
	}))
	r.Put("/api/contracts/:id", httpx.Require("Contracts.Update"), httpx.JSONBody(func(c *fiber.Ctx, in UpdateRequest) (Detail, error) {
		return s.Update(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Delete("/api/contracts/:id", httpx.Require("Contracts.Delete"), func(c *fiber.Ctx) error {
		if err := s.Delete(c.UserContext(), caller(c), c.Params("id")); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})
	r.Post("/api/contracts/:id/transitions", httpx.Require("Contracts.Read"), httpx.JSONBody(func(c *fiber.Ctx, in TransitionRequest) (Detail, error) {
		return s.Transition(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Post("/api/contracts/:id/comments", httpx.Require("Contracts.Read"), func(c *fiber.Ctx) error {
		var in CommentRequest
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		out, err := s.AddComment(c.UserContext(), caller(c), c.Params("id"), in)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(out)
	})
	r.Post("/api/contracts/:id/attachments", httpx.Require("Contracts.Update"), func(c *fiber.Ctx) error {
		up, err := httpx.ReadUpload(c, "file", maxUploadBytes)
		if err != nil {
			return err
		}
		file := Upload{FileName: up.File.Filename, Size: up.File.Size, Open: func() (io.ReadCloser, error) { return up.File.Open() }}
		purpose := ""
		if p := up.Value("purpose"); p != nil {
			purpose = *p
		}
		a, err := s.AddAttachment(c.UserContext(), caller(c), c.Params("id"), purpose, file, maxUploadBytes)
		if err != nil {
			return err
		}
		return httpx.Created(c, attachmentPath(c, a), a)
	})
	r.Get("/api/contracts/:id/attachments/:attachmentId", httpx.Require("Contracts.Read"), func(c *fiber.Ctx) error {
		a, body, err := s.OpenAttachment(c.UserContext(), caller(c), c.Params("id"), c.Params("attachmentId"))
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, a.ContentType)
		c.Set(fiber.HeaderContentDisposition, httpx.ContentDisposition(a.FileName))
		return c.SendStream(body, int(a.Size))
	})
	r.Delete("/api/contracts/:id/attachments/:attachmentId", httpx.Require("Contracts.Update"), func(c *fiber.Ctx) error {
		if err := s.DeleteAttachment(c.UserContext(), caller(c), c.Params("id"), c.Params("attachmentId")); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})
	r.Post("/api/contracts/:id/draft-export", httpx.Require("Contracts.Update"), func(c *fiber.Ctx) error {
		a, err := s.DraftExport(c.UserContext(), caller(c), c.Params("id"), maxUploadBytes)
		if err != nil {
			return err
		}
		return httpx.Created(c, attachmentPath(c, a), a)
	})
}

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

func attachmentPath(c *fiber.Ctx, a AttachmentDTO) string {
	return fmt.Sprintf("/api/contracts/%s/attachments/%s", c.Params("id"), a.ID)
}

func (s *Service) list(c *fiber.Ctx) (paging.Page[Summary], error) {
	req, err := httpx.ListRequest(c, ListSpec)
	if err != nil {
		return paging.Page[Summary]{}, err
	}
	f := listFilter{Phase: c.Query("phase"), SupplierID: c.Query("supplierId"), ProjectID: c.Query("projectId"),
		ContractType: c.Query("contractType"), Search: req.Search}
	return s.List(c.UserContext(), caller(c), f, req)
}
