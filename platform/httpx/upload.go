package httpx

import (
	"fmt"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
)

// Upload is the one file of a multipart/form-data request and its other
// form fields.
type Upload struct {
	File   *multipart.FileHeader
	values map[string][]string
}

// Value returns a form field, matching its name case-insensitively, or nil.
func (u *Upload) Value(name string) *string {
	for k, vs := range u.values {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return &vs[0]
		}
	}
	return nil
}

// ReadUpload reads a multipart/form-data body carrying exactly one file in
// field (matched case-insensitively): 415 when the body is not multipart,
// 400 keyed File when the file is missing or repeated, 413 over maxBytes.
func ReadUpload(c *fiber.Ctx, field string, maxBytes int64) (*Upload, error) {
	mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != fiber.MIMEMultipartForm {
		return nil, apperr.New(apperr.KindUnsupportedMedia, "unsupported_media_type",
			fmt.Sprintf("Send multipart/form-data with the file in the field %q.", field))
	}
	form, err := c.MultipartForm()
	if err != nil {
		return nil, apperr.FieldError("Body", "The body is not a valid multipart form.")
	}
	var files []*multipart.FileHeader
	for k, fs := range form.File {
		if strings.EqualFold(k, field) {
			files = append(files, fs...)
		}
	}
	switch len(files) {
	case 0:
		return nil, apperr.FieldError("File", fmt.Sprintf("Attach the file in the form field %q.", field))
	case 1:
	default:
		return nil, apperr.FieldError("File", "Attach exactly one file.")
	}
	if files[0].Size > maxBytes {
		return nil, TooLarge(maxBytes)
	}
	if err := checkFormText(form.Value, files[0].Filename); err != nil {
		return nil, err
	}
	return &Upload{File: files[0], values: form.Value}, nil
}

// checkFormText applies the text rule to the form's fields and the file's
// name, which is stored and shown again.
func checkFormText(values map[string][]string, fileName string) error {
	fields := apperr.Fields{}
	if msg := TextProblem(fileName); msg != "" {
		fields.Add("File", "The file name "+lower(msg))
	}
	for k, vs := range values {
		if msg := TextProblem(k); msg != "" {
			fields.Add("Body", "A form field name "+lower(msg))
			continue
		}
		for _, v := range vs {
			if msg := TextProblem(v); msg != "" {
				fields.Add(pascal(k), msg)
				break
			}
		}
	}
	return fields.Err()
}

// TooLarge is the 413 of a file over its limit.
func TooLarge(maxBytes int64) *apperr.Error {
	return apperr.New(apperr.KindTooLarge, "payload_too_large", fmt.Sprintf("Files may be at most %d bytes.", maxBytes))
}
