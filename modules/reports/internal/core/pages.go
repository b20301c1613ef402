package core

import "github.com/gofiber/fiber/v2"

// ServeExport is the export as the pages offer it (GET
// /reports/contracts/export): the API handler itself, so the filter, its
// refusals and the streamed workbook are the API's. A refusal is returned
// before anything is written, for the page to show next to its fields.
func (s *Service) ServeExport(c *fiber.Ctx) error { return s.export(c) }

// PhaseWords names the contract phases in lang ("vi" or "en"), the words
// the export writes, so the pages and the workbook say the same.
func PhaseWords(lang string) map[string]string { return wordsFor(lang).phases }
