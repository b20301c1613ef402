// Package render fills {{placeholders}} in Word (.docx) and Excel (.xlsx)
// templates and checks that an uploaded file really is one of the two.
//
// The Go docx libraries measured for this project either failed on a
// placeholder that Word split across runs or did not escape values, so the
// docx half is a small standard-library renderer: unzip, join the text of
// each paragraph's runs, replace, escape, rezip, copying every other part
// byte for byte. The xlsx half uses excelize. Both read archives through
// the same bounded checks, so a zip bomb, a path with "..", or a damaged
// file is refused before anything is decompressed in full.
package render

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/contractflow/contractflow/platform/apperr"
)

// Format is the kind of template file.
type Format string

// The two formats.
const (
	DOCX Format = "docx"
	XLSX Format = "xlsx"
)

// ContentType is the media type of a file of this format.
func (f Format) ContentType() string {
	if f == XLSX {
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	}
	return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
}

// Limits bound what reading an archive may cost.
type Limits struct {
	MaxEntries    int   // entries in the archive
	MaxEntryBytes int64 // decompressed size of one entry
	MaxTotalBytes int64 // decompressed size of all entries together
}

// DefaultLimits are generous for real contracts (a 25 MiB upload of text
// and pictures) and refuse anything that expands far beyond that.
var DefaultLimits = Limits{MaxEntries: 1000, MaxEntryBytes: 32 << 20, MaxTotalBytes: 128 << 20}

// ErrNotZip answers bytes that are not a zip archive at all (a text file,
// a PDF, an old binary .doc): the client sent the wrong kind of file.
var ErrNotZip = apperr.New(apperr.KindUnsupportedMedia, "unsupported_media_type",
	"The file is not a Word document (.docx) or an Excel workbook (.xlsx).")

// fileError answers a zip archive that cannot be used as a template; the
// message says what is wrong with the file.
func fileError(format string, args ...any) error {
	return apperr.FieldError("File", fmt.Sprintf(format, args...))
}

var errDamaged = fileError("The file is damaged; save it again from Word or Excel and upload it again.")

const (
	ctDocxMain     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
	ctXlsxMain     = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
	relOfficeDoc   = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
	relOfficeDocS  = "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument"
	contentTypesXM = "[content_types].xml"
)

// docxTextTypes are the parts of a Word document whose text is filled:
// the body (with its tables), headers, footers, footnotes and endnotes.
var docxTextTypes = []string{
	ctDocxMain,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.endnotes+xml",
}

// pkg is an opened OOXML package whose entries passed the checks.
type pkg struct {
	data   []byte
	zr     *zip.Reader
	byName map[string]*zip.File // lower-case name → entry (OPC names are case-insensitive)
	lim    Limits
	read   int64 // bytes decompressed so far, against MaxTotalBytes

	defaults  map[string]string // extension → content type
	overrides map[string]string // lower-case part name without "/" → content type
	format    Format
}

// open checks data as an OOXML package and finds its format. It reads only
// the archive's directory, [Content_Types].xml and the package
// relationships; entries are decompressed later, each under the limits.
func open(data []byte, lim Limits) (*pkg, error) {
	if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return nil, ErrNotZip
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, errDamaged
	}
	if zr == nil {
		return nil, errDamaged
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, fileError("The file holds more than %d parts; it is not a plain document or workbook.", lim.MaxEntries)
	}
	p := &pkg{data: data, zr: zr, byName: make(map[string]*zip.File, len(zr.File)), lim: lim}
	var declared uint64
	for _, f := range zr.File {
		if unsafeName(f.Name) {
			return nil, fileError("The file holds a part with an unsafe path (%q).", f.Name)
		}
		if f.Flags&0x1 != 0 {
			return nil, fileError("The file is encrypted; remove the password and upload it again.")
		}
		if f.UncompressedSize64 > uint64(lim.MaxEntryBytes) {
			return nil, fileError("The file expands to more than %d MiB when decompressed.", lim.MaxEntryBytes>>20)
		}
		declared += f.UncompressedSize64
		if declared > uint64(lim.MaxTotalBytes) {
			return nil, fileError("The file expands to more than %d MiB when decompressed.", lim.MaxTotalBytes>>20)
		}
		key := strings.ToLower(f.Name)
		if _, dup := p.byName[key]; dup {
			return nil, fileError("The file holds the part %q twice.", f.Name)
		}
		p.byName[key] = f
	}
	if err := p.readContentTypes(); err != nil {
		return nil, err
	}
	main, err := p.mainPart()
	if err != nil {
		return nil, err
	}
	switch p.contentType(main) {
	case ctDocxMain:
		p.format = DOCX
	case ctXlsxMain:
		p.format = XLSX
	default:
		return nil, fileError("The file is not a Word document (.docx) or an Excel workbook (.xlsx); macro-enabled and template files are not accepted.")
	}
	if p.byName[strings.ToLower(main)] == nil {
		return nil, fileError("The file has no %s part.", main)
	}
	return p, nil
}

// unsafeName refuses entry names that could escape a folder if extracted.
func unsafeName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") ||
		(len(name) > 1 && name[1] == ':') {
		return true
	}
	return slices.Contains(strings.Split(name, "/"), "..")
}

// readEntry decompresses one entry, holding it to the per-entry and total
// limits whatever its header claims.
func (p *pkg) readEntry(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, errDamaged
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, p.lim.MaxEntryBytes+1))
	if err != nil {
		return nil, errDamaged
	}
	if int64(len(data)) > p.lim.MaxEntryBytes {
		return nil, fileError("The file expands to more than %d MiB when decompressed.", p.lim.MaxEntryBytes>>20)
	}
	p.read += int64(len(data))
	if p.read > p.lim.MaxTotalBytes {
		return nil, fileError("The file expands to more than %d MiB when decompressed.", p.lim.MaxTotalBytes>>20)
	}
	return data, nil
}

// verifyAll decompresses every entry to nowhere, so a damaged entry (bad
// checksum, broken deflate stream) is found at upload, not at render.
func (p *pkg) verifyAll() error {
	for _, f := range p.zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return errDamaged
		}
		n, err := io.Copy(io.Discard, io.LimitReader(rc, p.lim.MaxEntryBytes+1))
		rc.Close()
		if err != nil {
			return errDamaged
		}
		p.read += n
		if n > p.lim.MaxEntryBytes || p.read > p.lim.MaxTotalBytes {
			return fileError("The file expands to more than %d MiB when decompressed.", p.lim.MaxTotalBytes>>20)
		}
	}
	return nil
}

func (p *pkg) part(name string) ([]byte, error) {
	f := p.byName[strings.ToLower(name)]
	if f == nil {
		return nil, fileError("The file is not a Word document (.docx) or an Excel workbook (.xlsx): it has no %s.", name)
	}
	return p.readEntry(f)
}

func (p *pkg) readContentTypes() error {
	data, err := p.part("[Content_Types].xml")
	if err != nil {
		return err
	}
	var types struct {
		Defaults []struct {
			Extension   string `xml:"Extension,attr"`
			ContentType string `xml:"ContentType,attr"`
		} `xml:"Default"`
		Overrides []struct {
			PartName    string `xml:"PartName,attr"`
			ContentType string `xml:"ContentType,attr"`
		} `xml:"Override"`
	}
	if err := xml.Unmarshal(data, &types); err != nil {
		return fileError("The file's [Content_Types].xml is not valid XML.")
	}
	p.defaults = map[string]string{}
	p.overrides = map[string]string{}
	for _, d := range types.Defaults {
		p.defaults[strings.ToLower(d.Extension)] = d.ContentType
	}
	for _, o := range types.Overrides {
		p.overrides[strings.ToLower(strings.TrimPrefix(o.PartName, "/"))] = o.ContentType
	}
	return nil
}

// contentType is the declared type of a part (name without leading "/").
func (p *pkg) contentType(name string) string {
	if ct, ok := p.overrides[strings.ToLower(name)]; ok {
		return ct
	}
	ext := strings.TrimPrefix(path.Ext(name), ".")
	return p.defaults[strings.ToLower(ext)]
}

// mainPart follows the package relationship to the main document part.
func (p *pkg) mainPart() (string, error) {
	data, err := p.part("_rels/.rels")
	if err != nil {
		return "", err
	}
	var rels struct {
		Rels []struct {
			Type       string `xml:"Type,attr"`
			Target     string `xml:"Target,attr"`
			TargetMode string `xml:"TargetMode,attr"`
		} `xml:"Relationship"`
	}
	if err := xml.Unmarshal(data, &rels); err != nil {
		return "", fileError("The file's _rels/.rels is not valid XML.")
	}
	for _, r := range rels.Rels {
		if (r.Type == relOfficeDoc || r.Type == relOfficeDocS) && !strings.EqualFold(r.TargetMode, "External") {
			target := strings.TrimPrefix(path.Clean("/"+r.Target), "/")
			return target, nil
		}
	}
	return "", fileError("The file is not a Word document (.docx) or an Excel workbook (.xlsx): it names no main part.")
}

// Info is what inspecting a template file found.
type Info struct {
	Format       Format
	Placeholders []string // sorted, each once
}

// Inspect checks that data is a docx or xlsx that opens within lim —
// decompressing every entry once, under the limits — and lists the
// placeholders it holds. Errors are apperr errors: unsupported media for
// bytes that are not a zip archive, a field error on File otherwise.
func Inspect(data []byte, lim Limits) (info Info, err error) {
	defer recoverAsDamaged(&err)
	p, err := open(data, lim)
	if err != nil {
		return Info{}, err
	}
	if err := p.verifyAll(); err != nil {
		return Info{}, err
	}
	p.read = 0
	var names []string
	switch p.format {
	case DOCX:
		names, err = scanDocx(p)
	case XLSX:
		names, err = scanXlsx(p)
	}
	if err != nil {
		return Info{}, err
	}
	slices.Sort(names)
	return Info{Format: p.format, Placeholders: slices.Compact(names)}, nil
}

// Render fills the placeholders of a template with vals and returns the
// new file. Placeholders without a value are left as they are.
func Render(data []byte, vals Values, lim Limits) (out []byte, format Format, err error) {
	defer recoverAsDamaged(&err)
	p, err := open(data, lim)
	if err != nil {
		return nil, "", err
	}
	switch p.format {
	case DOCX:
		out, err = renderDocx(p, vals)
	case XLSX:
		out, err = renderXlsx(p, vals)
	}
	return out, p.format, err
}

// recoverAsDamaged turns a panic inside a parser fed a hostile file into
// the answer for a damaged file, so one bad upload cannot take a request
// (or, in a job, the process) down.
func recoverAsDamaged(err *error) {
	if r := recover(); r != nil {
		*err = errDamaged
	}
}
