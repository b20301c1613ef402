package httpx

import "github.com/gofiber/fiber/v2"

// Decode reads a JSON request body into dst without running its rules, for
// handlers whose service validates after checking the resource exists (the
// order of checks puts 404 before 400). It still answers 415, 413 and 400
// for a body that is not JSON, too large, malformed or of the wrong types.
func Decode(c *fiber.Ctx, dst any) error {
	if err := checkJSON(c); err != nil {
		return err
	}
	return decode(c.Body(), dst)
}
