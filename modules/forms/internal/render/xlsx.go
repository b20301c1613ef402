package render

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// openWorkbook opens a checked package with excelize, under the same limits.
func openWorkbook(p *pkg) (*excelize.File, error) {
	f, err := excelize.OpenReader(bytes.NewReader(p.data), excelize.Options{
		UnzipSizeLimit:    p.lim.MaxTotalBytes,
		UnzipXMLSizeLimit: p.lim.MaxEntryBytes,
	})
	if err != nil {
		return nil, fileError("The workbook cannot be read; save it again from Excel and upload it again.")
	}
	return f, nil
}

// cellVisit is called with every cell whose raw text holds "{{".
type cellVisit func(sheet, cell, value string) error

// eachPlaceholderCell visits the text cells of every worksheet that hold a
// placeholder; formula cells are skipped (their text is the cached result).
// Chart sheets and other non-worksheets have no cells.
func eachPlaceholderCell(f *excelize.File, visit cellVisit) error {
	for _, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
		if err != nil {
			if err.Error() == fmt.Sprintf("sheet %s is not a worksheet", sheet) {
				continue
			}
			return fileError("The sheet %q cannot be read.", sheet)
		}
		for r, row := range rows {
			for c, v := range row {
				if !strings.Contains(v, "{{") {
					continue
				}
				cell, err := excelize.CoordinatesToCellName(c+1, r+1)
				if err != nil {
					return err
				}
				if fx, err := f.GetCellFormula(sheet, cell); err != nil || fx != "" {
					continue
				}
				if err := visit(sheet, cell, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// headerFooters are the six header and footer texts of a sheet.
func headerFooters(o *excelize.HeaderFooterOptions) []*string {
	return []*string{&o.OddHeader, &o.OddFooter, &o.EvenHeader, &o.EvenFooter, &o.FirstHeader, &o.FirstFooter}
}

func scanXlsx(p *pkg) ([]string, error) {
	f, err := openWorkbook(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	err = eachPlaceholderCell(f, func(_, _, v string) error {
		names = append(names, Placeholders(v)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, sheet := range f.GetSheetList() {
		hf, err := f.GetHeaderFooter(sheet)
		if err != nil || hf == nil {
			continue
		}
		for _, s := range headerFooters(hf) {
			names = append(names, Placeholders(*s)...)
		}
	}
	return names, nil
}

// renderXlsx fills every worksheet cell, keeping each cell's style; a cell
// that is exactly the placeholder of a number or money field gets the
// number itself, so formulas over it compute. Headers and footers are
// filled with "&" doubled (it starts a code there). Cached formula results
// are dropped and the workbook asks to be recalculated when opened.
func renderXlsx(p *pkg, vals Values) ([]byte, error) {
	f, err := openWorkbook(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	err = eachPlaceholderCell(f, func(sheet, cell, v string) error {
		if m := exactRe().FindStringSubmatch(v); m != nil {
			if val, ok := vals[m[1]]; ok && val.IsNumber() {
				return f.SetCellFloat(sheet, cell, val.Number, -1, 64)
			}
		}
		if out, changed := replaceText(v, vals, nil); changed {
			return f.SetCellStr(sheet, cell, out)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	amp := func(s string) string { return strings.ReplaceAll(s, "&", "&&") }
	for _, sheet := range f.GetSheetList() {
		hf, err := f.GetHeaderFooter(sheet)
		if err != nil || hf == nil {
			continue
		}
		changed := false
		for _, s := range headerFooters(hf) {
			if out, ok := replaceText(*s, vals, amp); ok {
				*s, changed = out, true
			}
		}
		if changed {
			if err := f.SetHeaderFooter(sheet, hf); err != nil {
				return nil, fileError("The header or footer of sheet %q is too long once filled.", sheet)
			}
		}
	}
	if err := f.UpdateLinkedValue(); err != nil {
		return nil, err
	}
	cacheFormulaValues(f)
	// Viewers that calculate recalculate everything on opening; the cached
	// values above serve those that do not (previews, phones, converters).
	recalc := true
	if err := f.SetCalcProps(&excelize.CalcPropsOptions{FullCalcOnLoad: &recalc}); err != nil {
		return nil, err
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// cacheFormulaValues stores, beside every formula the renderer can
// compute (arithmetic and SUM over the typed number cells it just wrote),
// the computed value, so a viewer that does not recalculate shows the
// totals instead of empty cells. A formula it cannot compute (a placeholder
// left unfilled, a function excelize lacks) keeps no cached value; Excel and
// LibreOffice recalculate it on load anyway (fullCalcOnLoad).
func cacheFormulaValues(f *excelize.File) {
	for _, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
		if err != nil {
			continue
		}
		for r, row := range rows {
			for c := range row {
				cell, err := excelize.CoordinatesToCellName(c+1, r+1)
				if err != nil {
					continue
				}
				formula, err := f.GetCellFormula(sheet, cell)
				if err != nil || formula == "" {
					continue
				}
				v, err := f.CalcCellValue(sheet, cell, excelize.Options{RawCellValue: true})
				if err != nil || v == "" {
					continue
				}
				n, err := strconv.ParseFloat(v, 64)
				if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
					continue
				}
				// SetCellFloat writes the value and drops the formula, which
				// SetCellFormula then puts back over the cached value.
				if f.SetCellFloat(sheet, cell, n, -1, 64) != nil {
					continue
				}
				_ = f.SetCellFormula(sheet, cell, formula)
			}
		}
	}
}
