package openapi

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
)

// Paths under which Mount serves the document and the UI.
const (
	DocPath = "/swagger/doc.json"
	UIPath  = "/swagger/"
)

// Mount serves the document at GET /swagger/doc.json and Swagger UI at
// /swagger/ (GET /swagger redirects there). The UI's scripts, styles and
// icons are embedded in the binary (swgui's v5emb), so it works where the
// service cannot reach a CDN. r must be the root router: the paths are
// absolute.
func Mount(r fiber.Router, doc []byte) {
	ui := v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "ContractFlow API",
		SwaggerJSON: DocPath,
		BasePath:    UIPath,
		// Keep the token across reloads of the page while trying the API.
		SettingsUI: map[string]string{"persistAuthorization": "true"},
	})
	assets := adaptor.HTTPHandler(ui)
	serveUI := func(c *fiber.Ctx) error {
		if err := assets(c); err != nil {
			return err
		}
		// An unknown asset gets the service's problem response rather than
		// the file server's plain-text 404.
		if c.Response().StatusCode() == fiber.StatusNotFound {
			return fiber.ErrNotFound
		}
		return nil
	}

	r.Get(DocPath, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		c.Set(fiber.HeaderCacheControl, "no-cache")
		return c.Send(doc)
	})
	// Without strict routing Fiber matches /swagger and /swagger/ alike, so
	// the redirect looks at the path the client actually sent.
	r.Get("/swagger", func(c *fiber.Ctx) error {
		if c.Path() == "/swagger" {
			return c.Redirect(UIPath, fiber.StatusFound)
		}
		return serveUI(c)
	})
	r.Get(UIPath+"*", serveUI)
}
