package httpx

import (
	gojson "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"
)

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

// JSON adapts a call that needs no body to a handler answering 200 with
// its result as JSON.
func JSON[Out any](call func(c *fiber.Ctx) (Out, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := call(c)
		if err != nil {
			return err
		}
		return writeJSON(c, out)
	}
}

// JSONBody adapts a call taking the decoded JSON body (see Decode) to a
// handler answering 200 with its result as JSON.
func JSONBody[In, Out any](call func(c *fiber.Ctx, in In) (Out, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var in In
		if err := Decode(c, &in); err != nil {
			return err
		}
		out, err := call(c, in)
		if err != nil {
			return err
		}
		return writeJSON(c, out)
	}
}

// NoContentBody adapts a call taking the decoded JSON body to a handler
// answering 204.
func NoContentBody[In any](call func(c *fiber.Ctx, in In) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var in In
		if err := Decode(c, &in); err != nil {
			return err
		}
		if err := call(c, in); err != nil {
			return err
		}
		return NoContent(c)
	}
}

// writeJSON answers v as JSON, encoded straight into the response body:
// c.JSON marshals into a new slice and then copies it, a body-sized
// allocation on every list and inbox page. Like any json.Encoder, it ends
// the body with a newline. The encoder is goccy/go-json, encoding/json's
// API and output (HTML escaped, MarshalJSON compacted, map keys sorted)
// with a compiled encoder per type instead of reflection per value:
// encoding/json was a sixth of an inbox page's CPU. Requests are still
// decoded by encoding/json, whose error types the 400 problems name.
func writeJSON(c *fiber.Ctx, v any) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return gojson.NewEncoder(c.Response().BodyWriter()).Encode(v)
}
