package core

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
)

// handlers adapt HTTP to the service.
type handlers struct {
	svc      *Service
	maxBytes int64 // uploads.maxBytes
}

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

func (h handlers) list(c *fiber.Ctx) error {
	req, err := httpx.ListRequest(c, ListSpec)
	if err != nil {
		return err
	}
	f := listFilter{Phase: c.Query("phase"), SupplierID: c.Query("supplierId"), ProjectID: c.Query("projectId"),
		ContractType: c.Query("contractType"), Search: req.Search}
	page, err := h.svc.List(c.UserContext(), caller(c), f, req)
	if err != nil {
		return err
	}
	return c.JSON(page)
}

func (h handlers) inbox(c *fiber.Ctx) error {
	req, err := httpx.ListRequest(c, InboxSpec)
	if err != nil {
		return err
	}
	page, err := h.svc.Inbox(c.UserContext(), caller(c), req)
	if err != nil {
		return err
	}
	return c.JSON(page)
}

func (h handlers) get(c *fiber.Ctx) error {
	d, err := h.svc.Get(c.UserContext(), caller(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(d)
}

func (h handlers) create(c *fiber.Ctx) error {
	var in CreateRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	d, err := h.svc.Create(c.UserContext(), caller(c), in)
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/contracts/"+d.ID, d)
}

func (h handlers) update(c *fiber.Ctx) error {
	var in UpdateRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	d, err := h.svc.Update(c.UserContext(), caller(c), c.Params("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(d)
}

func (h handlers) delete(c *fiber.Ctx) error {
	if err := h.svc.Delete(c.UserContext(), caller(c), c.Params("id")); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

func (h handlers) transition(c *fiber.Ctx) error {
	var in TransitionRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	d, err := h.svc.Transition(c.UserContext(), caller(c), c.Params("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(d)
}

func (h handlers) comment(c *fiber.Ctx) error {
	var in CommentRequest
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	out, err := h.svc.AddComment(c.UserContext(), caller(c), c.Params("id"), in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

func (h handlers) upload(c *fiber.Ctx) error {
	fh, err := c.FormFile("file")
	if err != nil {
		if strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEMultipartForm) {
			return apperr.FieldError("File", "Is required.")
		}
		return apperr.New(apperr.KindUnsupportedMedia, "unsupported_media_type", "Send the file as multipart/form-data with a part named file.")
	}
	up := Upload{FileName: fh.Filename, Size: fh.Size, Open: func() (io.ReadCloser, error) { return openPart(fh) }}
	a, err := h.svc.AddAttachment(c.UserContext(), caller(c), c.Params("id"), c.FormValue("purpose"), up, h.maxBytes)
	if err != nil {
		return err
	}
	return httpx.Created(c, fmt.Sprintf("/api/contracts/%s/attachments/%s", c.Params("id"), a.ID), a)
}

func openPart(fh *multipart.FileHeader) (io.ReadCloser, error) { return fh.Open() }

func (h handlers) download(c *fiber.Ctx) error {
	a, body, err := h.svc.OpenAttachment(c.UserContext(), caller(c), c.Params("id"), c.Params("attachmentId"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, a.ContentType)
	c.Set(fiber.HeaderContentDisposition, ContentDisposition(a.FileName))
	return c.SendStream(body, int(a.Size))
}

// ContentDisposition names a download for every client: an ASCII fallback
// and the exact UTF-8 name (RFC 6266, RFC 5987).
func ContentDisposition(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, name)
	return fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, ascii, url.PathEscape(name))
}

func (h handlers) deleteAttachment(c *fiber.Ctx) error {
	if err := h.svc.DeleteAttachment(c.UserContext(), caller(c), c.Params("id"), c.Params("attachmentId")); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

func (h handlers) draftExport(c *fiber.Ctx) error {
	a, err := h.svc.DraftExport(c.UserContext(), caller(c), c.Params("id"), h.maxBytes)
	if err != nil {
		return err
	}
	return httpx.Created(c, fmt.Sprintf("/api/contracts/%s/attachments/%s", c.Params("id"), a.ID), a)
}
