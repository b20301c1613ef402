package forms_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/forms"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// escapeProbe is the value every test puts into text fields to prove
// values are escaped.
const escapeProbe = `<b>&"x"`

// template is a template as the API shows it.
type template struct {
	ID            string
	FormCode      string
	Name          string
	ContractType  string
	FileName      string
	StoragePath   string
	Format        string
	FieldSpec     []forms.Field
	IsActive      bool
	FileAvailable bool
	Version       int
	Placeholders  []string // GET /api/forms/templates/{id} only
}

type uploadResult struct {
	Template        template
	Placeholders    []string
	MissingFromSpec []string
	UnusedInSpec    []string
}

type page struct {
	Items      []template
	TotalCount int
}

func listTemplates(t testing.TB, app *testkit.App, token, query string) page {
	t.Helper()
	r := app.Do(testkit.Request{Method: "GET", Path: "/api/forms/templates" + query, Token: token})
	if r.Status != 200 {
		t.Fatalf("list templates%s: %d %s", query, r.Status, r.Body)
	}
	var p page
	r.JSON(t, &p)
	return p
}

func byCode(t testing.TB, app *testkit.App, token, code string) template {
	t.Helper()
	for _, tpl := range listTemplates(t, app, token, "?pageSize=100").Items {
		if tpl.FormCode == code {
			return tpl
		}
	}
	t.Fatalf("no template %s", code)
	return template{}
}

func getTemplate(t testing.TB, app *testkit.App, token, id string) template {
	t.Helper()
	r := app.Do(testkit.Request{Method: "GET", Path: "/api/forms/templates/" + id, Token: token})
	if r.Status != 200 {
		t.Fatalf("get template %s: %d %s", id, r.Status, r.Body)
	}
	var tpl template
	r.JSON(t, &tpl)
	return tpl
}

// valuesFor gives every field of spec a value of its type: text fields get
// the escape probe (partyBName) or a Vietnamese text, money 1 250 000 000,
// numbers 10, dates 2026-11-21.
func valuesFor(spec []forms.Field) map[string]any {
	out := map[string]any{}
	for _, f := range spec {
		switch f.Type {
		case forms.FieldMoney:
			out[f.Name] = 1250000000
		case forms.FieldNumber:
			out[f.Name] = 10
		case forms.FieldDate:
			out[f.Name] = "2026-11-21"
		default:
			out[f.Name] = "Giá trị " + f.Name
		}
	}
	if _, ok := out["partyBName"]; ok {
		out["partyBName"] = escapeProbe
	}
	return out
}

// multipartBody builds a multipart/form-data body with a file and fields.
func multipartBody(t testing.TB, fileName string, file []byte, fields map[string]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := w.WriteField(k, fields[k]); err != nil {
			t.Fatal(err)
		}
	}
	if file != nil {
		fw, err := w.CreateFormFile("file", fileName)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(file); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

func uploadRequest(t testing.TB, method, path, token, fileName string, file []byte, fields map[string]string) testkit.Request {
	body, ct := multipartBody(t, fileName, file, fields)
	return testkit.Request{Method: method, Path: path, Token: token, Body: body, ContentType: ct}
}

// zipFiles reads every entry of a zip archive.
func zipFiles(t testing.TB, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip archive: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		out[f.Name] = b
	}
	return out
}

// checkXMLParts parses every XML part of an OOXML package with
// encoding/xml, failing on the first that is not well-formed.
func checkXMLParts(t testing.TB, parts map[string][]byte) {
	t.Helper()
	for name, data := range parts {
		if !strings.HasSuffix(name, ".xml") && !strings.HasSuffix(name, ".rels") {
			continue
		}
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			_, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", name, err)
			}
		}
	}
}

// checkPackage checks an OOXML package's structure: every part but the
// relationships has a content type in [Content_Types].xml, and every
// internal relationship points at a part that exists.
func checkPackage(t testing.TB, parts map[string][]byte) {
	t.Helper()
	var types struct {
		Defaults []struct {
			Extension string `xml:"Extension,attr"`
		} `xml:"Default"`
		Overrides []struct {
			PartName string `xml:"PartName,attr"`
		} `xml:"Override"`
	}
	if err := xml.Unmarshal(parts["[Content_Types].xml"], &types); err != nil {
		t.Fatalf("[Content_Types].xml: %v", err)
	}
	typed := map[string]bool{}
	for _, d := range types.Defaults {
		typed["ext:"+strings.ToLower(d.Extension)] = true
	}
	for _, o := range types.Overrides {
		typed[strings.TrimPrefix(o.PartName, "/")] = true
		if _, ok := parts[strings.TrimPrefix(o.PartName, "/")]; !ok {
			t.Errorf("[Content_Types].xml names %s, which is not in the package", o.PartName)
		}
	}
	for name := range parts {
		if name == "[Content_Types].xml" || strings.HasSuffix(name, "/") {
			continue
		}
		if !typed[name] && !typed["ext:"+strings.ToLower(path.Ext(name)[1:])] {
			t.Errorf("part %s has no content type", name)
		}
		if !strings.HasSuffix(name, ".rels") {
			continue
		}
		var rels struct {
			Rels []struct {
				Target     string `xml:"Target,attr"`
				TargetMode string `xml:"TargetMode,attr"`
			} `xml:"Relationship"`
		}
		if err := xml.Unmarshal(parts[name], &rels); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// "word/_rels/document.xml.rels" describes "word/document.xml".
		base := path.Dir(path.Dir(name))
		for _, r := range rels.Rels {
			if r.TargetMode == "External" {
				continue
			}
			target := path.Join(base, r.Target)
			if strings.HasPrefix(r.Target, "/") {
				target = strings.TrimPrefix(r.Target, "/")
			}
			if _, ok := parts[target]; !ok {
				t.Errorf("%s points at %s, which is not in the package", name, target)
			}
		}
	}
}

// wordParagraphs returns the text of each w:p of a WordprocessingML part.
func wordParagraphs(t testing.TB, data []byte) []string {
	t.Helper()
	const w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	d := xml.NewDecoder(bytes.NewReader(data))
	var out []string
	var cur []*strings.Builder
	inT := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if x.Name.Space == w && x.Name.Local == "p" {
				cur = append(cur, &strings.Builder{})
			}
			if x.Name.Space == w && x.Name.Local == "t" {
				inT = true
			}
		case xml.EndElement:
			if x.Name.Space == w && x.Name.Local == "p" && len(cur) > 0 {
				out = append(out, cur[len(cur)-1].String())
				cur = cur[:len(cur)-1]
			}
			if x.Name.Space == w && x.Name.Local == "t" {
				inT = false
			}
		case xml.CharData:
			if inT && len(cur) > 0 {
				cur[len(cur)-1].Write(x)
			}
		}
	}
	return out
}

// storedFiles lists the files in the instance's blob storage folder.
func storedFiles(t testing.TB, app *testkit.App) []string {
	t.Helper()
	root := app.Kernel.App().Config.Storage.Path
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func blobExists(t testing.TB, app *testkit.App, key string) bool {
	t.Helper()
	ok, err := app.Kernel.App().Blobs.Exists(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func renderer(t testing.TB, app *testkit.App) forms.Renderer {
	t.Helper()
	r, err := kernel.Need[forms.Renderer](app.Kernel.App())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// splitDocx is a purpose-built Word document whose placeholders are split
// across runs the way Word leaves them: in a body paragraph (with a
// proofing mark between the runs and formatting on the first), in a table
// cell, in the header and in the footer. It also carries escaped text of
// its own and one placeholder no value is given for.
func splitDocx(t testing.TB) []byte {
	t.Helper()
	const ns = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`
	parts := [][2]string{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
			`<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>` +
			`<Override PartName="/word/footer1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/>` +
			`</Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>` +
			`</Relationships>`},
		{"word/_rels/document.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" Target="footer1.xml"/>` +
			`</Relationships>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ` + ns + `><w:body>` +
			// "Bên B: {{partyBName}} – A &amp; B" as Word splits it: "{{", "party", "BName}}".
			`<w:p><w:r><w:t xml:space="preserve">Bên B: </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>{{</w:t></w:r>` +
			`<w:proofErr w:type="spellStart"/><w:r w:rsidR="00A1"><w:t>party</w:t></w:r><w:proofErr w:type="spellEnd"/>` +
			`<w:r w:rsidR="00B2"><w:rPr><w:i/></w:rPr><w:t xml:space="preserve">BName}} – A &amp; B</w:t></w:r></w:p>` +
			// Two placeholders sharing runs, one of them never given a value.
			`<w:p><w:r><w:t>Giá: {{contract</w:t></w:r><w:r><w:t>Value}} đồng, {{ notGiven }}, ngày {{contract</w:t></w:r><w:r><w:t>Date}}.</w:t></w:r></w:p>` +
			`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>{{note</w:t></w:r><w:r><w:t>s}}</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
			`<w:sectPr><w:headerReference w:type="default" r:id="rId1"/><w:footerReference w:type="default" r:id="rId2"/></w:sectPr>` +
			`</w:body></w:document>`},
		{"word/header1.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:hdr ` + ns + `>` +
			`<w:p><w:r><w:t>Số {{contract</w:t></w:r><w:r><w:t>Code }}</w:t></w:r></w:p></w:hdr>`},
		{"word/footer1.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:ftr ` + ns + `>` +
			`<w:p><w:r><w:t>{</w:t></w:r><w:r><w:t>{partyBName}</w:t></w:r><w:r><w:t>} – trang </w:t></w:r>` +
			`<w:fldSimple w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple></w:p></w:ftr>`},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.Create(p[0])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(w, p[1])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipWriter is a zip.Writer that fails the test instead of returning errors.
type zipWriter struct{ w *zip.Writer }

func newZip(out io.Writer) *zipWriter { return &zipWriter{zip.NewWriter(out)} }

func (z *zipWriter) create(t testing.TB, name string) io.Writer {
	t.Helper()
	w, err := z.w.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (z *zipWriter) add(t testing.TB, name string, data []byte) {
	t.Helper()
	if _, err := z.create(t, name).Write(data); err != nil {
		t.Fatal(err)
	}
}

func (z *zipWriter) close(t testing.TB) {
	t.Helper()
	if err := z.w.Close(); err != nil {
		t.Fatal(err)
	}
}
