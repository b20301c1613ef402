package httpx

import "github.com/gofiber/fiber/v2"

// Keys of the values middleware leaves on a request.
const (
	localRequestID = "cf.requestId"
	localMaxBody   = "cf.maxBody"
)

// RequestID returns the id of the current request ("" before the request-id
// middleware ran).
func RequestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

// SetRequestID records the id of the current request.
func SetRequestID(c *fiber.Ctx, id string) { c.Locals(localRequestID, id) }
