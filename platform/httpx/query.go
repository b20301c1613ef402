package httpx

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
)

// QueryBool reads an optional boolean query parameter; field names the
// parameter in the validation error.
func QueryBool(c *fiber.Ctx, name, field string) (*bool, error) {
	s := c.Query(name)
	if s == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return nil, apperr.FieldError(field, "Must be true or false.")
	}
	return &b, nil
}
