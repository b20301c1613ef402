package contracts_test

import (
	"archive/zip"
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io/fs"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

func pdfFile() []byte {
	return []byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
}

func imageFile(t testing.TB, format string) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for x := range 4 {
		img.Set(x, x, color.RGBA{200, 30, 30, 255})
	}
	var buf bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ooxmlFile is the smallest Word (main "word/document.xml") or Excel
// ("xl/workbook.xml") package the service must recognise.
func ooxmlFile(t testing.TB, main string) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, content := range map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		main:                  `<?xml version="1.0" encoding="UTF-8"?><root/>`,
	} {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// multipartBody builds a form with fields and one file part. The file
// name is written as given (quotes escaped), so tests can send hostile names.
func multipartBody(t testing.TB, fields map[string]string, fileField, fileName string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if fileField != "" {
		h := textproto.MIMEHeader{}
		name := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(fileName)
		h.Set("Content-Disposition", `form-data; name="`+fileField+`"; filename="`+name+`"`)
		h.Set("Content-Type", "application/octet-stream")
		p, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

func (e *env) upload(t testing.TB, token, id, purpose, fileName string, content []byte) *testkit.Response {
	t.Helper()
	fields := map[string]string{}
	if purpose != "" {
		fields["purpose"] = purpose
	}
	body, ct := multipartBody(t, fields, "file", fileName, content)
	return e.app.Do(testkit.Request{Method: "POST", Path: "/api/contracts/" + id + "/attachments", Token: token, Body: body, ContentType: ct})
}

// storedFiles lists the contract files under the storage folder, relative
// to it (other modules keep theirs there too, such as the forms templates).
func storedFiles(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, p); !d.IsDir() && strings.HasPrefix(filepath.ToSlash(rel), "contracts/") {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var generatedName = regexp.MustCompile(`^contracts/[0-9a-f-]{36}/\d{4}/\d{2}/[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.(pdf|png|jpg|docx|xlsx)$`)

// TestAttachments: uploads judged by content, stored under generated names,
// downloaded as sent, deleted by their uploader or Admin.
func TestAttachments(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		dir := t.TempDir()
		e := start(t, d, testkit.WithConfig("storage.path", dir), testkit.WithConfig("uploads.maxBytes", 1024))
		drafter := e.user(t, "Drafter")
		colleague := e.user(t, "DeptManager")
		c := e.create(t, drafter.token, nil)

		docx := ooxmlFile(t, "word/document.xml")
		xlsx := ooxmlFile(t, "xl/workbook.xml")
		kinds := []struct {
			name, fileName, purpose, contentType string
			content                              []byte
		}{
			{"pdf", "hop-dong.pdf", "ScannedSigned", "application/pdf", pdfFile()},
			{"png", "scan.png", "ScannedSigned", "image/png", imageFile(t, "png")},
			{"jpeg", "ảnh chụp.jpg", "SealedCopy", "image/jpeg", imageFile(t, "jpeg")},
			{"docx", "ban-ky.docx", "SealedCopy", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx},
			{"xlsx", "bang-gia.xlsx", "ScannedSigned", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", xlsx},
			{"png named pdf", "scan.pdf", "ScannedSigned", "image/png", imageFile(t, "png")},
		}
		ids := map[string]attachment{}
		for _, k := range kinds {
			if len(k.content) > 1024 {
				t.Fatalf("%s test file is %d bytes, over the limit", k.name, len(k.content))
			}
			t.Run("upload "+k.name, func(t *testing.T) {
				r := e.upload(t, drafter.token, c.ID, k.purpose, k.fileName, k.content)
				if r.Status != 201 {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				var a attachment
				r.JSON(t, &a)
				if a.FileName != k.fileName || a.Purpose != k.purpose || a.ContentType != k.contentType || a.Size != int64(len(k.content)) ||
					a.UploadedBy != drafter.id || a.UploadedByName != drafter.name || !a.CreatedAt.Equal(t0) {
					t.Fatalf("attachment %+v", a)
				}
				if r.Header.Get("Location") != "/api/contracts/"+c.ID+"/attachments/"+a.ID {
					t.Fatalf("location %q", r.Header.Get("Location"))
				}
				ids[k.name] = a

				dl := e.do("GET", "/api/contracts/"+c.ID+"/attachments/"+a.ID, drafter.token, nil)
				if dl.Status != 200 || !bytes.Equal(dl.Body, k.content) {
					t.Fatalf("download: %d, %d bytes", dl.Status, len(dl.Body))
				}
				if got := dl.Header.Get("Content-Type"); got != k.contentType {
					t.Fatalf("content type %q", got)
				}
				if cd := dl.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, "filename*=UTF-8''") {
					t.Fatalf("content disposition %q", cd)
				}
			})
		}
		files := storedFiles(t, dir)
		if len(files) != len(kinds) {
			t.Fatalf("%d files stored, want %d: %v", len(files), len(kinds), files)
		}
		for _, f := range files {
			if !generatedName.MatchString(f) {
				t.Errorf("stored name %q is not generated", f)
			}
		}
		det := e.get(t, drafter.token, c.ID)
		if len(det.Attachments) != len(kinds) || det.Attachments[0].FileName != "hop-dong.pdf" || det.Attachments[0].UploadedByName != drafter.name {
			t.Fatalf("detail attachments %+v", det.Attachments)
		}

		t.Run("client file names are sanitised", func(t *testing.T) {
			for _, tc := range []struct{ sent, kept string }{
				{`../../etc/passwd.pdf`, "passwd.pdf"},
				{`C:\Users\an\Desktop\hợp đồng.pdf`, "hợp đồng.pdf"},
				{`bản "ký" tay.pdf`, "bản _ký_ tay.pdf"},
				{`a;b:c*?<>|.pdf`, "a_b_c_____.pdf"},
				{"..", "file"},
			} {
				r := e.upload(t, drafter.token, c.ID, "ScannedSigned", tc.sent, pdfFile())
				if r.Status != 201 {
					t.Fatalf("%q: %d %s", tc.sent, r.Status, r.Body)
				}
				var a attachment
				r.JSON(t, &a)
				if a.FileName != tc.kept {
					t.Errorf("%q kept as %q, want %q", tc.sent, a.FileName, tc.kept)
				}
				dl := e.do("GET", "/api/contracts/"+c.ID+"/attachments/"+a.ID, drafter.token, nil)
				cd := dl.Header.Get("Content-Disposition")
				if strings.Count(cd, `"`) != 2 || strings.ContainsAny(cd, "\r\n") {
					t.Errorf("%q: content disposition %q", tc.sent, cd)
				}
			}
			for _, f := range storedFiles(t, dir) {
				if !generatedName.MatchString(f) {
					t.Errorf("stored name %q is not generated", f)
				}
			}
		})

		before := storedFiles(t, dir)
		rows := e.count(t, "SELECT COUNT(*) FROM contract_attachments")
		t.Run("refused uploads leave nothing behind", func(t *testing.T) {
			big := append(pdfFile(), bytes.Repeat([]byte("0"), 1024)...)
			noPart, noPartType := multipartBody(t, map[string]string{"purpose": "ScannedSigned"}, "", "", nil)
			otherPart, otherPartType := multipartBody(t, map[string]string{"purpose": "ScannedSigned"}, "document", "a.pdf", pdfFile())
			zipOnly := func() []byte {
				var buf bytes.Buffer
				z := zip.NewWriter(&buf)
				w, _ := z.Create("readme.txt")
				_, _ = w.Write([]byte("hello"))
				_ = z.Close()
				return buf.Bytes()
			}()
			up := func(_, purpose, fileName string, content []byte) testkit.Request {
				body, ct := multipartBody(t, map[string]string{"purpose": purpose}, "file", fileName, content)
				if purpose == "" {
					body, ct = multipartBody(t, nil, "file", fileName, content)
				}
				return testkit.Request{Method: "POST", Path: "/api/contracts/" + c.ID + "/attachments", Token: drafter.token, Body: body, ContentType: ct}
			}
			e.app.Run(t, []testkit.Scenario{
				{Name: "purpose DraftExport", Request: up("", "DraftExport", "a.pdf", pdfFile()), Status: 400, Code: "validation_failed", Fields: []string{"Purpose"}},
				{Name: "purpose unknown", Request: up("", "Invoice", "a.pdf", pdfFile()), Status: 400, Code: "validation_failed", Fields: []string{"Purpose"}},
				{Name: "purpose missing", Request: up("", "", "a.pdf", pdfFile()), Status: 400, Code: "validation_failed", Fields: []string{"Purpose"}},
				{Name: "text named pdf", Request: up("", "ScannedSigned", "hop-dong.pdf", []byte("just some text, not a PDF at all")), Status: 415, Code: "unsupported_media_type"},
				{Name: "html named png", Request: up("", "ScannedSigned", "a.png", []byte("<html><script>alert(1)</script></html>")), Status: 415, Code: "unsupported_media_type"},
				{Name: "plain zip named docx", Request: up("", "ScannedSigned", "a.docx", zipOnly), Status: 415, Code: "unsupported_media_type"},
				{Name: "empty file", Request: up("", "ScannedSigned", "a.pdf", nil), Status: 415, Code: "unsupported_media_type"},
				{Name: "over uploads.maxBytes", Request: up("", "ScannedSigned", "big.pdf", big), Status: 413, Code: "payload_too_large"},
				{Name: "no file part", Request: testkit.Request{Method: "POST", Path: "/api/contracts/" + c.ID + "/attachments", Token: drafter.token, Body: noPart, ContentType: noPartType},
					Status: 400, Code: "validation_failed", Fields: []string{"File"}},
				{Name: "file under another name", Request: testkit.Request{Method: "POST", Path: "/api/contracts/" + c.ID + "/attachments", Token: drafter.token, Body: otherPart, ContentType: otherPartType},
					Status: 400, Code: "validation_failed", Fields: []string{"File"}},
				{Name: "JSON instead of a form", Request: testkit.Request{Method: "POST", Path: "/api/contracts/" + c.ID + "/attachments", Token: drafter.token, Body: map[string]any{"purpose": "ScannedSigned"}},
					Status: 415, Code: "unsupported_media_type"},
				{Name: "unknown contract", Request: func() testkit.Request {
					r := up("", "ScannedSigned", "a.pdf", pdfFile())
					r.Path = "/api/contracts/0190f5f2-7a3b-7c4d-8e5f-000000000001/attachments"
					return r
				}(), Status: 404, Code: "not_found"},
			})
			if after := storedFiles(t, dir); len(after) != len(before) {
				t.Fatalf("refused uploads left files: %v", after)
			}
			if n := e.count(t, "SELECT COUNT(*) FROM contract_attachments"); n != rows {
				t.Fatalf("refused uploads wrote %d rows", n-rows)
			}
		})

		t.Run("download errors", func(t *testing.T) {
			testkit.WantProblem(t, e.do("GET", "/api/contracts/"+c.ID+"/attachments/0190f5f2-7a3b-7c4d-8e5f-000000000001", drafter.token, nil), 404, "not_found")
			testkit.WantProblem(t, e.do("GET", "/api/contracts/"+c.ID+"/attachments/x", drafter.token, nil), 404, "not_found")
			other := e.create(t, drafter.token, nil)
			// An attachment is only found under its own contract.
			testkit.WantProblem(t, e.do("GET", "/api/contracts/"+other.ID+"/attachments/"+ids["pdf"].ID, drafter.token, nil), 404, "not_found")
			testkit.WantProblem(t, e.do("DELETE", "/api/contracts/"+other.ID+"/attachments/"+ids["pdf"].ID, drafter.token, nil), 404, "not_found")
		})

		t.Run("delete", func(t *testing.T) {
			path := func(name string) string { return "/api/contracts/" + c.ID + "/attachments/" + ids[name].ID }
			// A colleague who sees the contract and may update contracts did not upload it.
			testkit.WantProblem(t, e.do("DELETE", path("pdf"), colleague.token, nil), 403, "forbidden")
			n := len(storedFiles(t, dir))
			if r := e.do("DELETE", path("pdf"), drafter.token, nil); r.Status != 204 {
				t.Fatalf("uploader: %d %s", r.Status, r.Body)
			}
			if r := e.do("DELETE", path("png"), e.admin, nil); r.Status != 204 {
				t.Fatalf("admin: %d %s", r.Status, r.Body)
			}
			if got := len(storedFiles(t, dir)); got != n-2 {
				t.Fatalf("%d files after deleting two of %d", got, n)
			}
			testkit.WantProblem(t, e.do("GET", path("pdf"), drafter.token, nil), 404, "not_found")
			testkit.WantProblem(t, e.do("DELETE", path("pdf"), drafter.token, nil), 404, "not_found")
			for _, a := range e.get(t, drafter.token, c.ID).Attachments {
				if a.ID == ids["pdf"].ID || a.ID == ids["png"].ID {
					t.Fatal("deleted attachment still in the detail")
				}
			}

			// Once published, attachments are kept.
			e.drive(t, c.ID, DaPhatHanh)
			testkit.WantProblem(t, e.do("DELETE", path("jpeg"), drafter.token, nil), 409, "not_deletable")
			testkit.WantProblem(t, e.do("DELETE", path("jpeg"), e.admin, nil), 409, "not_deletable")
			if r := e.do("GET", path("jpeg"), drafter.token, nil); r.Status != 200 {
				t.Fatalf("download after publication: %d", r.Status)
			}
		})

		t.Run("a failed row leaves no file", func(t *testing.T) {
			c := e.create(t, drafter.token, nil)
			n := len(storedFiles(t, dir))
			e.exec(t, "ALTER TABLE contract_attachments RENAME TO contract_attachments_away")
			r := e.upload(t, drafter.token, c.ID, "ScannedSigned", "a.pdf", pdfFile())
			e.exec(t, "ALTER TABLE contract_attachments_away RENAME TO contract_attachments")
			testkit.WantProblem(t, r, 500, "internal")
			if got := storedFiles(t, dir); len(got) != n {
				t.Fatalf("orphan file left: %v", got)
			}
		})
		t.Run("a missing file is a 404", func(t *testing.T) {
			c := e.create(t, drafter.token, nil)
			r := e.upload(t, drafter.token, c.ID, "SealedCopy", "a.pdf", pdfFile())
			var a attachment
			r.JSON(t, &a)
			var key string
			if err := e.app.Kernel.App().DB.Conn(t.Context()).Raw("SELECT storage_path FROM contract_attachments WHERE id = ?", a.ID).Scan(&key).Error; err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
				t.Fatal(err)
			}
			testkit.WantProblem(t, e.do("GET", "/api/contracts/"+c.ID+"/attachments/"+a.ID, drafter.token, nil), 404, "not_found")
		})
	})
}

// TestComments: a comment records the phase it was posted in.
func TestComments(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		pm := e.user(t, "ProjectManager")
		c := e.create(t, drafter.token, nil)
		post := func(token, content string) *testkit.Response {
			return e.do("POST", "/api/contracts/"+c.ID+"/comments", token, map[string]any{"content": content})
		}
		r := post(drafter.token, "  Xin góp ý điều khoản 5  ")
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		var cm comment
		r.JSON(t, &cm)
		if cm.Phase != DangSoanThao || cm.Content != "Xin góp ý điều khoản 5" || cm.AuthorID != drafter.id || cm.AuthorName != drafter.name || !cm.CreatedAt.Equal(t0) {
			t.Fatalf("comment %+v", cm)
		}
		e.drive(t, c.ID, DangGopY)
		r = post(pm.token, strings.Repeat("ý", 4000)) // the limit counts characters, not bytes
		if r.Status != 201 {
			t.Fatalf("4000 characters: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &cm)
		if cm.Phase != DangGopY || cm.AuthorName != pm.name {
			t.Fatalf("comment %+v", cm)
		}
		got := e.get(t, drafter.token, c.ID)
		if len(got.Comments) != 2 || got.Comments[0].Phase != DangSoanThao || got.Comments[1].Phase != DangGopY || got.Comments[1].AuthorName != pm.name {
			t.Fatalf("detail comments %+v", got.Comments)
		}
		path := "/api/contracts/" + c.ID + "/comments"
		bad := func(name string, body any, status int, fields ...string) testkit.Scenario {
			code := "validation_failed"
			if status == 415 {
				code = "unsupported_media_type"
			}
			return testkit.Scenario{Name: name, Request: testkit.Request{Method: "POST", Path: path, Token: pm.token, Body: body}, Status: status, Code: code, Fields: fields}
		}
		e.app.Run(t, []testkit.Scenario{
			bad("empty", map[string]any{"content": ""}, 400, "Content"),
			bad("blank", map[string]any{"content": " \n\t "}, 400, "Content"),
			bad("missing", map[string]any{}, 400, "Content"),
			bad("too long", map[string]any{"content": strings.Repeat("ý", 4001)}, 400, "Content"),
			bad("a number", map[string]any{"content": 5}, 400, "Content"),
			bad("malformed", `{"content":`, 400, "Body"),
			{Name: "unknown contract", Request: testkit.Request{Method: "POST", Path: "/api/contracts/0190f5f2-7a3b-7c4d-8e5f-000000000001/comments", Token: pm.token,
				Body: map[string]any{"content": "x"}}, Status: 404, Code: "not_found"},
		})
		if n := e.count(t, "SELECT COUNT(*) FROM contract_comments"); n != 2 {
			t.Fatalf("%d comments stored", n)
		}
		// Comments are allowed in terminal phases too: the thread stays open.
		e.drive(t, c.ID, DaPhatHanh)
		if r := post(drafter.token, "Đã phát hành"); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}
