package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
)

// handlers adapt HTTP to the service; they hold no logic of their own.
type handlers struct{ svc *Service }

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

func (h handlers) list(c *fiber.Ctx) error {
	req, err := httpx.ListRequest(c, TemplateSpec)
	if err != nil {
		return err
	}
	onlyActive, err := httpx.QueryBool(c, "onlyActive", "OnlyActive")
	if err != nil {
		return err
	}
	f := Filter{OnlyActive: onlyActive != nil && *onlyActive}
	if s := c.Query("contractType"); s != "" {
		ct, ok := CanonicalContractType(s)
		if !ok {
			return apperr.FieldError("ContractType", contractTypeMessage())
		}
		f.ContractType = ct
	}
	page, err := h.svc.List(c.UserContext(), f, req)
	if err != nil {
		return err
	}
	return c.JSON(page)
}

// render answers the filled template as a download. Numbers in the body
// are read as written (json.Number), so money keeps every digit.
func (h handlers) render(c *fiber.Ctx) error {
	var raw map[string]json.RawMessage
	if err := httpx.Decode(c, &raw); err != nil {
		return err
	}
	data := make(map[string]any, len(raw))
	for k, v := range raw {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			return apperr.FieldError("Body", "The body is not valid JSON.")
		}
		data[k] = x
	}
	doc, err := h.svc.RenderTemplate(c.UserContext(), c.Params("id"), data)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, doc.ContentType)
	c.Set(fiber.HeaderContentDisposition, httpx.ContentDisposition(doc.FileName))
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.SendStream(bytes.NewReader(doc.Body), len(doc.Body))
}

// file answers the template's stored file as a download.
func (h handlers) file(c *fiber.Ctx) error {
	doc, err := h.svc.TemplateFile(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, doc.ContentType)
	c.Set(fiber.HeaderContentDisposition, httpx.ContentDisposition(doc.FileName))
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.SendStream(bytes.NewReader(doc.Body), len(doc.Body))
}

func (h handlers) create(c *fiber.Ctx) error {
	up, err := h.readUpload(c)
	if err != nil {
		return err
	}
	in := UploadInput{FileName: up.fileName, Data: up.data, FieldSpec: up.Value("fieldSpec")}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"formCode", &in.FormCode}, {"name", &in.Name}, {"contractType", &in.ContractType}} {
		if v := up.Value(f.name); v != nil {
			*f.dst = *v
		}
	}
	out, err := h.svc.Create(c.UserContext(), caller(c), in)
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/forms/templates/"+out.Template.ID, out)
}

func (h handlers) replaceFile(c *fiber.Ctx) error {
	up, err := h.readUpload(c)
	if err != nil {
		return err
	}
	var version *int
	if v := up.Value("version"); v != nil && strings.TrimSpace(*v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(*v))
		if err != nil {
			return apperr.FieldError("Version", "Must be a whole number.")
		}
		version = &n
	}
	out, err := h.svc.ReplaceFile(c.UserContext(), caller(c), c.Params("id"), up.fileName, up.data, version)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// upload is a multipart request's file, read whole, and its form fields.
type upload struct {
	*httpx.Upload
	fileName string
	data     []byte
}

// readUpload reads a multipart/form-data body with the file in the field
// "file", holding it to uploads.maxBytes (413).
func (h handlers) readUpload(c *fiber.Ctx) (*upload, error) {
	limit := h.svc.MaxUploadBytes()
	up, err := httpx.ReadUpload(c, "file", limit)
	if err != nil {
		return nil, err
	}
	f, err := up.File.Open()
	if err != nil {
		return nil, fmt.Errorf("open uploaded file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read uploaded file: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, httpx.TooLarge(limit)
	}
	return &upload{Upload: up, fileName: up.File.Filename, data: data}, nil
}
