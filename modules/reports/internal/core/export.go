package core

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/masterdata"
)

// exportColumns are the ten columns of the export (DESIGN §9).
var exportColumns = []string{"MaHopDong", "Title", "ContractType", "Supplier", "Project", "Value", "Phase", "SlaDeadline", "Drafter", "CreatedAt"}

const sheet = "Contracts"

// Workbook is a finished export, written to the client with WriteTo.
type Workbook struct {
	f    *excelize.File
	Rows int
}

// WriteTo streams the xlsx.
func (w *Workbook) WriteTo(out io.Writer) (int64, error) { return w.f.WriteTo(out) }

// Close removes the workbook's temporary files.
func (w *Workbook) Close() error { return w.f.Close() }

// Export builds the xlsx of the contracts matching f with excelize's stream
// writer: rows go to a temporary file as they come, a page of contracts at a
// time, so memory stays flat as the export grows. Names of suppliers,
// projects and drafters are resolved per page and remembered.
func (s *Service) Export(ctx context.Context, f contracts.ExportFilter) (*Workbook, error) {
	x := excelize.NewFile()
	ok := false
	defer func() {
		if !ok {
			_ = x.Close()
		}
	}()
	if err := x.SetSheetName("Sheet1", sheet); err != nil {
		return nil, err
	}
	sw, err := x.NewStreamWriter(sheet)
	if err != nil {
		return nil, err
	}
	bold, err := x.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return nil, err
	}
	moneyFmt := "#,##0"
	amount, err := x.NewStyle(&excelize.Style{CustomNumFmt: &moneyFmt})
	if err != nil {
		return nil, err
	}
	dateFmt := "yyyy-mm-dd hh:mm"
	date, err := x.NewStyle(&excelize.Style{CustomNumFmt: &dateFmt})
	if err != nil {
		return nil, err
	}
	totalStyle, err := x.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, CustomNumFmt: &moneyFmt})
	if err != nil {
		return nil, err
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return nil, err
	}
	for i, w := range []float64{20, 40, 18, 32, 32, 18, 16, 18, 24, 18} {
		if err := sw.SetColWidth(i+1, i+1, w); err != nil {
			return nil, err
		}
	}
	header := make([]any, len(exportColumns))
	for i, h := range exportColumns {
		header[i] = excelize.Cell{Value: h, StyleID: bold}
	}
	if err := sw.SetRow("A1", header); err != nil {
		return nil, err
	}

	names := newNameCache(s)
	row := 1
	err = s.Contracts.Export(ctx, f, func(page []contracts.ExportRow) error {
		if err := names.load(ctx, page); err != nil {
			return err
		}
		for _, c := range page {
			row++
			cells := []any{
				deref(c.MaHopDong), c.Title, c.ContractType, names.suppliers[c.SupplierID].Name,
				projectName(names.projects, c.ProjectID), excelize.Cell{Value: c.Value.Float(), StyleID: amount}, c.Phase,
				s.dateCell(c.SLADeadline, date), names.users[c.DrafterID], s.dateCell(&c.CreatedAt, date),
			}
			if err := sw.SetRow(fmt.Sprintf("A%d", row), cells); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	total := []any{excelize.Cell{Value: "Total", StyleID: bold}, nil, nil, nil, nil,
		excelize.Cell{Formula: fmt.Sprintf("SUM(F2:F%d)", max(row, 2)), StyleID: totalStyle}}
	if err := sw.SetRow(fmt.Sprintf("A%d", row+1), total); err != nil {
		return nil, err
	}
	if err := sw.Flush(); err != nil {
		return nil, err
	}
	ok = true
	return &Workbook{f: x, Rows: row - 1}, nil
}

// dateCell shows an instant as wall time in the business time zone.
func (s *Service) dateCell(t *time.Time, style int) any {
	if t == nil {
		return nil
	}
	local := t.In(s.Location)
	wall := time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), local.Minute(), local.Second(), 0, time.UTC)
	return excelize.Cell{Value: wall, StyleID: style}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func projectName(projects map[string]masterdata.Ref, id *string) string {
	if id == nil {
		return ""
	}
	return projects[*id].Name
}

// nameCache resolves the names an export shows, each id once.
type nameCache struct {
	s         *Service
	suppliers map[string]masterdata.Ref
	projects  map[string]masterdata.Ref
	users     map[string]string
}

func newNameCache(s *Service) *nameCache {
	return &nameCache{s: s, suppliers: map[string]masterdata.Ref{}, projects: map[string]masterdata.Ref{}, users: map[string]string{}}
}

func (n *nameCache) load(ctx context.Context, page []contracts.ExportRow) error {
	var sup, prj, usr []string
	seen := map[string]bool{}
	for _, c := range page {
		if _, ok := n.suppliers[c.SupplierID]; !ok && !seen[c.SupplierID] {
			sup, seen[c.SupplierID] = append(sup, c.SupplierID), true
		}
		if c.ProjectID != nil {
			if _, ok := n.projects[*c.ProjectID]; !ok && !seen[*c.ProjectID] {
				prj, seen[*c.ProjectID] = append(prj, *c.ProjectID), true
			}
		}
		if _, ok := n.users[c.DrafterID]; !ok && !seen[c.DrafterID] {
			usr, seen[c.DrafterID] = append(usr, c.DrafterID), true
		}
	}
	if err := merge(ctx, sup, n.s.MasterData.Suppliers, n.suppliers); err != nil {
		return err
	}
	if err := merge(ctx, prj, n.s.MasterData.Projects, n.projects); err != nil {
		return err
	}
	if len(usr) > 0 {
		got, err := n.s.Directory.Names(ctx, usr)
		if err != nil {
			return err
		}
		for _, id := range usr {
			n.users[id] = got[id] // "" for unknown ids, so they are not asked for again
		}
	}
	return nil
}

func merge(ctx context.Context, ids []string, fetch func(context.Context, []string) (map[string]masterdata.Ref, error), into map[string]masterdata.Ref) error {
	if len(ids) == 0 {
		return nil
	}
	got, err := fetch(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		into[id] = got[id]
	}
	return nil
}
