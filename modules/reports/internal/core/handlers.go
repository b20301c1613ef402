package core

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/httpx"
)

// Routes declares the two report endpoints.
func (s *Service) Routes(r *httpx.Routes) {
	r.Get("/api/reports/dashboard", httpx.Require("Dashboard.Read"), s.dashboard)
	r.Get("/api/reports/contracts/export", httpx.Require("Reports.Read"), s.export)
}

func (s *Service) dashboard(c *fiber.Ctx) error {
	d, err := s.Dashboard(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(d)
}

// xlsxType is the media type of the export.
const xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

func (s *Service) export(c *fiber.Ctx) error {
	f, err := s.exportFilter(c)
	if err != nil {
		return err
	}
	// The first rows are read before the answer starts, so that a failure
	// to read them is still a problem answer; the rest stream into the zip.
	e, err := s.StartExport(c.UserContext(), f)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("contracts-%s.xlsx", s.Clock.Now().In(s.Location).Format("20060102-1504"))
	c.Set(fiber.HeaderContentType, xlsxType)
	c.Set(fiber.HeaderContentDisposition, httpx.ContentDisposition(name))
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer e.Close()
		if _, err := e.WriteTo(w); err != nil {
			return // the client went away, or the read failed: the zip has no directory and does not open
		}
		_ = w.Flush()
	})
	return nil
}

// exportFilter reads phase, supplierId, projectId, from and to (dates of
// creation in the business time zone, both inclusive).
func (s *Service) exportFilter(c *fiber.Ctx) (contracts.ExportFilter, error) {
	f := contracts.ExportFilter{Phase: c.Query("phase"), SupplierID: c.Query("supplierId"), ProjectID: c.Query("projectId")}
	fields := apperr.Fields{}
	if f.Phase != "" && !slices.Contains(contracts.Phases, f.Phase) {
		fields.Add("Phase", "Must be one of: "+strings.Join(contracts.Phases, ", ")+".")
	}
	for field, v := range map[string]string{"SupplierId": f.SupplierID, "ProjectId": f.ProjectID} {
		if _, err := uuid.Parse(v); v != "" && err != nil {
			fields.Add(field, "Must be a UUID.")
		}
	}
	parse := func(field, v string) time.Time {
		if v == "" {
			return time.Time{}
		}
		t, err := time.ParseInLocation("2006-01-02", v, s.Location)
		if err != nil {
			fields.Add(field, "Must be a date like 2026-11-21.")
		}
		return t
	}
	f.From = parse("From", c.Query("from"))
	to := parse("To", c.Query("to"))
	if !to.IsZero() {
		f.To = to.AddDate(0, 0, 1)
	}
	if !f.From.IsZero() && !to.IsZero() && f.From.After(to) {
		fields.Add("From", "Must not be after To.")
	}
	return f, fields.Err()
}
