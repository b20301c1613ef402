package core

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/xlsxstream"
)

// exportWords are the words of the export in each business language
// (business.language): the ten column headers in DESIGN §9's order, the
// phases (DESIGN §12), the contract types, and the sheet's fixed texts.
type exportWords struct {
	sheet, total, footer string
	headers              [10]string
	phases, types        map[string]string
	dateFormat           string
}

var words = map[string]*exportWords{
	"vi": {
		sheet: "Hợp đồng", total: "Tổng cộng", footer: "Trang &P / &N",
		headers: [10]string{"Mã hợp đồng", "Tên hợp đồng", "Loại hợp đồng", "Nhà cung cấp", "Dự án", "Giá trị (VND)",
			"Giai đoạn", "Hạn xử lý", "Người soạn thảo", "Ngày tạo"},
		phases: map[string]string{"DangSoanThao": "Đang soạn thảo", "DangDamPhan": "Đang đàm phán", "DangGopY": "Đang góp ý",
			"DangInKy": "Đang in ký", "DangKiemTraCCM": "Đang kiểm tra CCM", "DangTrinhKy": "Đang trình ký",
			"DangDongDau": "Đang đóng dấu", "DaPhatHanh": "Đã phát hành", "TuChoi": "Từ chối"},
		types: map[string]string{"Subcontract": "Hợp đồng thầu phụ", "PieceWork": "Hợp đồng giao khoán", "Supply": "Hợp đồng cung cấp",
			"Service": "Hợp đồng dịch vụ", "Purchase": "Hợp đồng mua bán", "FrameworkSupply": "Hợp đồng khung cung cấp",
			"FrameworkSubcontract": "Hợp đồng khung thầu phụ"},
		dateFormat: "dd/mm/yyyy hh:mm",
	},
	"en": {
		sheet: "Contracts", total: "Total", footer: "Page &P of &N",
		headers: [10]string{"Contract code", "Title", "Contract type", "Supplier", "Project", "Value (VND)",
			"Phase", "Deadline", "Drafter", "Created"},
		phases: map[string]string{"DangSoanThao": "Drafting", "DangDamPhan": "Negotiating", "DangGopY": "Collecting comments",
			"DangInKy": "Printing for signature", "DangKiemTraCCM": "CCM check", "DangTrinhKy": "Submitted for signature",
			"DangDongDau": "Sealing", "DaPhatHanh": "Published", "TuChoi": "Rejected"},
		types: map[string]string{"Subcontract": "Subcontract", "PieceWork": "Piece work", "Supply": "Supply",
			"Service": "Service", "Purchase": "Purchase", "FrameworkSupply": "Framework supply",
			"FrameworkSubcontract": "Framework subcontract"},
		dateFormat: "yyyy-mm-dd hh:mm",
	},
}

// wordsFor picks the words of lang, Vietnamese when it is empty or unknown.
func wordsFor(lang string) *exportWords {
	if w, ok := words[lang]; ok {
		return w
	}
	return words["vi"]
}

// word is the business word for a code, or the code itself when it has none.
func word(m map[string]string, code string) string {
	if w, ok := m[code]; ok {
		return w
	}
	return code
}

// Column widths, in characters: at least the header's, at most maxWidth;
// between them, the widest value of the first widthSample rows.
const (
	widthSample = 500
	maxWidth    = 60.0
)

// Export is an export under way: its first rows are read (so a failure to
// read them is still an error the handler can answer with), the rest come
// as WriteTo writes the workbook.
type Export struct {
	s       *Service
	w       *exportWords
	feed    *feed
	pending []line // the first rows, read before the workbook starts
	Rows    int    // data rows written, known after WriteTo
}

// StartExport starts reading the contracts matching f and waits for the
// first widthSample of them (or all, when fewer): the columns' widths come
// before the first row in a worksheet. WriteTo writes the workbook; Close
// stops the reading if WriteTo is never called.
func (s *Service) StartExport(ctx context.Context, f contracts.ExportFilter) (*Export, error) {
	w := wordsFor(s.Language)
	e := &Export{s: s, w: w, feed: s.newFeed(ctx, f, w)}
	for len(e.pending) < widthSample {
		buf, ok := e.feed.next()
		if !ok {
			if err := e.feed.close(nil); err != nil {
				return nil, err
			}
			break
		}
		e.pending = append(e.pending, buf...) // the buffers are reused: copy
		e.feed.done(buf)
	}
	return e, nil
}

// Close stops the reading; it is safe after WriteTo.
func (e *Export) Close() { _ = e.feed.close(nil) }

// WriteTo writes the xlsx to out as the rows are read, each sheet's XML
// deflated straight into the zip that goes to out (platform/xlsxstream):
// memory holds a page of contracts, two pages of lines and the compressor,
// whatever the size of the export. It returns the bytes written. An error
// after the first bytes leaves a zip without its directory, which no
// reader opens.
//
// It reads like a report: headers, phases and contract types in words of
// the business language (s.Language), supplier and project as "code —
// name", dates in the business time zone, columns as wide as their first
// rows, a total row, an autofilter, and print setup (landscape, one page
// wide, the header row on every page, page numbers in the footer). An empty
// text cell is left out rather than written empty.
func (e *Export) WriteTo(out io.Writer) (int64, error) {
	cw := &countingWriter{w: out}
	err := e.write(cw)
	if cerr := e.feed.close(err); err == nil {
		err = cerr
	}
	return cw.n, err
}

func (e *Export) write(out io.Writer) error {
	w, s := e.w, e.s
	x := xlsxstream.New(out)
	bold := x.AddStyle(xlsxstream.Style{Bold: true, Fill: "DDEBF7", VAlign: "center", Wrap: true})
	amount := x.AddStyle(xlsxstream.Style{NumFmt: "#,##0"})
	date := x.AddStyle(xlsxstream.Style{NumFmt: w.dateFormat, HAlign: "left"})
	totalStyle := x.AddStyle(xlsxstream.Style{Bold: true, NumFmt: "#,##0"})
	totalLabel := x.AddStyle(xlsxstream.Style{Bold: true})

	margin := 0.4
	sheet, err := x.NewSheet(w.sheet, xlsxstream.SheetOptions{Widths: e.widths(), FreezeRows: 1, Landscape: true, PaperSize: 9,
		FitToWidth: 1, Margins: &margin, Footer: "&C" + w.footer, PrintTitles: 1})
	if err != nil {
		return err
	}
	cells := make([]xlsxstream.Cell, len(w.headers))
	for i, h := range w.headers {
		cells[i] = xlsxstream.String(h, bold)
	}
	if err := sheet.Row(30, cells...); err != nil {
		return err
	}
	var sum float64
	row := func(l *line) error {
		sum += l.value
		cells[0] = xlsxstream.String(l.code, 0)
		cells[1] = xlsxstream.String(l.title, 0)
		cells[2] = xlsxstream.String(l.contractType, 0)
		cells[3] = xlsxstream.String(l.supplier, 0)
		cells[4] = xlsxstream.String(l.project, 0)
		cells[5] = xlsxstream.Number(l.value, amount)
		cells[6] = xlsxstream.String(l.phase, 0)
		cells[7] = s.dateCell(l.deadline, date)
		cells[8] = xlsxstream.String(l.drafter, 0)
		cells[9] = s.dateCell(&l.created, date)
		return sheet.Row(0, cells...)
	}
	for i := range e.pending {
		if err := row(&e.pending[i]); err != nil {
			return err
		}
	}
	e.pending = nil
	for {
		buf, ok := e.feed.next()
		if !ok {
			break
		}
		for i := range buf {
			if err := row(&buf[i]); err != nil {
				return err
			}
		}
		e.feed.done(buf)
	}
	if err := e.feed.close(nil); err != nil {
		return err
	}
	last := sheet.Rows() // the header and the data rows
	e.Rows = last - 1
	// The total sums exactly the data rows F2:F<last>. With no rows that
	// range would be the total's own cell, a circular reference: write 0.
	total := xlsxstream.Number(0, totalStyle)
	if last > 1 {
		total = xlsxstream.Formula(fmt.Sprintf("SUM(F2:F%d)", last), sum, totalStyle)
	}
	if err := sheet.Row(0, xlsxstream.String(w.total, totalLabel), xlsxstream.Cell{}, xlsxstream.Cell{}, xlsxstream.Cell{}, xlsxstream.Cell{}, total); err != nil {
		return err
	}
	sheet.AutoFilter(fmt.Sprintf("A1:J%d", max(last, 2)))
	return x.Close()
}

// widths are the columns' widths: the headers' (bold text is a little
// wider) and what dates and amounts take, widened to the first rows' texts.
func (e *Export) widths() []float64 {
	w := e.w
	widths := make([]float64, len(w.headers))
	for i, h := range w.headers {
		widths[i] = float64(utf8.RuneCountInString(h)) + 3
	}
	widths[5] = max(widths[5], 16)
	widths[7] = max(widths[7], 17)
	widths[9] = max(widths[9], 17)
	for _, l := range e.pending {
		for i, str := range [...]string{0: l.code, 1: l.title, 2: l.contractType, 3: l.supplier, 4: l.project, 6: l.phase, 8: l.drafter} {
			if str != "" {
				widths[i] = max(widths[i], float64(utf8.RuneCountInString(str))+2)
			}
		}
		v := len(strconv.FormatFloat(l.value, 'f', 0, 64))
		widths[5] = max(widths[5], float64(v+v/3)+3)
	}
	for i := range widths {
		widths[i] = min(widths[i], maxWidth)
	}
	return widths
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// line is what the export shows of a contract, in words and names: it
// keeps of the row only the texts it shows (the code and the title), so a
// page of lines waiting to be written holds a fraction of a page of rows.
type line struct {
	code, title, contractType, phase, supplier, project, drafter string
	value                                                        float64
	deadline                                                     *time.Time
	created                                                      time.Time
}

// feed reads the contracts matching f, a page at a time, in a goroutine of
// its own, and turns them into lines: reading a page (the database)
// overlaps writing the previous one. Two buffers of lines take turns, so
// memory holds at most two pages of lines and the page being read,
// whatever the size of the export. Only the reading goroutine touches the
// database, so a transaction in ctx is safe.
type feed struct {
	full   chan []line
	free   chan []line
	read   chan error
	cancel context.CancelFunc
	err    error
	closed bool
}

func (s *Service) newFeed(ctx context.Context, f contracts.ExportFilter, w *exportWords) *feed {
	ctx, cancel := context.WithCancel(ctx)
	p := &feed{full: make(chan []line, 1), free: make(chan []line, 2), read: make(chan error, 1), cancel: cancel}
	p.free <- nil
	p.free <- nil
	go func() {
		defer close(p.full)
		names := newNameCache(s)
		p.read <- s.Contracts.Export(ctx, f, func(page []contracts.ExportRow) error {
			if err := names.load(ctx, page); err != nil {
				return err
			}
			var buf []line
			select {
			case buf = <-p.free:
			case <-ctx.Done():
				return ctx.Err()
			}
			buf = buf[:0]
			for i := range page {
				c := &page[i]
				buf = append(buf, line{code: deref(c.MaHopDong), title: c.Title, contractType: word(w.types, c.ContractType),
					phase: word(w.phases, c.Phase), supplier: names.suppliers[c.SupplierID], project: names.project(c.ProjectID),
					drafter: names.users[c.DrafterID], value: c.Value.Float(), deadline: c.SLADeadline, created: c.CreatedAt})
			}
			select {
			case p.full <- buf:
				return nil
			case <-ctx.Done(): // the writer stopped
				return ctx.Err()
			}
		})
	}()
	return p
}

// next is the next page of lines; false when the reading has ended.
func (p *feed) next() ([]line, bool) {
	if p.closed {
		return nil, false
	}
	buf, ok := <-p.full
	return buf, ok
}

// done hands a page's buffer back to the reader, emptied: its strings
// (titles, codes) go with the page instead of when the buffer is next
// filled.
func (p *feed) done(buf []line) {
	clear(buf)
	p.free <- buf
}

// close ends the reading (stopping it when werr says the writer failed or
// the reading has not finished), waits for the reader to go and returns its
// error. Later calls return the same.
func (p *feed) close(werr error) error {
	if p.closed {
		return p.err
	}
	p.closed = true
	p.cancel()
	for range p.full { // drain until the reader has gone
	}
	if rerr := <-p.read; werr == nil && rerr != nil {
		p.err = rerr
	}
	return p.err
}

// dateCell shows an instant as wall time in the business time zone.
func (s *Service) dateCell(t *time.Time, style int) xlsxstream.Cell {
	if t == nil {
		return xlsxstream.Cell{}
	}
	return xlsxstream.Time(t.In(s.Location), style)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// codeName shows master data as people know it: "NCC-HP — Thép Hòa Phát".
func codeName(r masterdata.Ref) string {
	switch {
	case r.Code == "":
		return r.Name
	case r.Name == "":
		return r.Code
	}
	return r.Code + " — " + r.Name
}

// nameCache resolves the names an export shows, each id once, to the text
// of its cell: every row with the id shares the one string.
type nameCache struct {
	s         *Service
	suppliers map[string]string // "code — name"
	projects  map[string]string // "code — name"
	users     map[string]string
}

func newNameCache(s *Service) *nameCache {
	return &nameCache{s: s, suppliers: map[string]string{}, projects: map[string]string{}, users: map[string]string{}}
}

func (n *nameCache) project(id *string) string {
	if id == nil {
		return ""
	}
	return n.projects[*id]
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

func merge(ctx context.Context, ids []string, fetch func(context.Context, []string) (map[string]masterdata.Ref, error), into map[string]string) error {
	if len(ids) == 0 {
		return nil
	}
	got, err := fetch(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		into[id] = codeName(got[id])
	}
	return nil
}
