package httpx_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/httpx"
)

type textLine struct {
	Note string `json:"note"`
}

type textRequest struct {
	Title string         `json:"title"`
	Tags  []string       `json:"tags"`
	Lines []textLine     `json:"lines"`
	Data  map[string]any `json:"data"`
	Raw   json.RawMessage
}

// textApp binds textRequest from a JSON body, reads the query through
// CheckQuery and a multipart form through ReadUpload, and echoes what it
// accepted.
func textApp() *fiber.App {
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(slog.New(slog.DiscardHandler))})
	app.Post("/bind", func(c *fiber.Ctx) error {
		var req textRequest
		if err := httpx.Bind(c, &req); err != nil {
			return err
		}
		return c.JSON(req)
	})
	app.Get("/query", httpx.CheckQuery, func(c *fiber.Ctx) error { return c.SendString(c.Query("search")) })
	app.Post("/upload", func(c *fiber.Ctx) error {
		up, err := httpx.ReadUpload(c, "file", 1<<20)
		if err != nil {
			return err
		}
		return c.SendString(up.File.Filename)
	})
	return app
}

func send(t testing.TB, app *fiber.App, r *http.Request) (int, map[string]any, []byte) {
	t.Helper()
	resp, err := app.Test(r, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var problem map[string]any
	if resp.StatusCode != http.StatusOK {
		require.NoError(t, json.Unmarshal(raw, &problem), "body %q", raw)
	}
	return resp.StatusCode, problem, raw
}

func errorKeys(p map[string]any) []string {
	var keys []string
	if e, ok := p["errors"].(map[string]any); ok {
		for k := range e {
			keys = append(keys, k)
		}
	}
	return keys
}

// badText is every kind of text the rule refuses, as JSON string literals.
var badText = map[string]string{
	"NUL escaped":               `"a\u0000b"`,
	"BEL escaped":               `"bell\u0007"`,
	"ESC escaped":               `"\u001b[31m"`,
	"lone high surrogate":       `"x\ud800y"`,
	"lone low surrogate":        `"\udc00"`,
	"high surrogate at the end": `"x\uD83D"`,
	"overlong slash":            "\"\xc0\xaf\"",
	"overlong NUL":              "\"\xc0\x80\"",
	"invalid byte":              "\"ab\xffcd\"",
	"truncated sequence":        "\"\xe1\xba\"",
	"encoded surrogate":         "\"\xed\xa0\x80\"",
}

func TestBindRefusesBadTextEverywhere(t *testing.T) {
	app := textApp()
	places := map[string]struct{ body, field string }{
		"top level":        {`{"title":%s}`, "Title"},
		"list element":     {`{"tags":["ok",%s]}`, "Tags[1]"},
		"struct in a list": {`{"lines":[{"note":"ok"},{"note":%s}]}`, "Lines[1].Note"},
		"map value":        {`{"data":{"tenNhaThau":%s}}`, "Data.TenNhaThau"},
		"nested any":       {`{"data":{"rows":[{"a":%s}]}}`, "Data.Rows[0].A"},
		"map key":          {`{"data":{%s:"v"}}`, "Data"},
		"raw message":      {`{"raw":{"x":%s}}`, "Raw.X"},
	}
	for kind, lit := range badText {
		for where, p := range places {
			t.Run(kind+"/"+where, func(t *testing.T) {
				body := strings.Replace(p.body, "%s", lit, 1)
				r := httptest.NewRequest(http.MethodPost, "/bind", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				status, problem, raw := send(t, app, r)
				require.Equal(t, http.StatusBadRequest, status, "body %s", raw)
				assert.Equal(t, "validation_failed", problem["code"])
				assert.Equal(t, []string{p.field}, errorKeys(problem))
			})
		}
	}
}

func TestBindAcceptsText(t *testing.T) {
	app := textApp()
	for name, lit := range map[string]string{
		"tab, newline, return":    `"a\tb\nc\r\n"`,
		"Vietnamese NFC":          `"Nguyễn Thị Ánh"`,
		"Vietnamese NFD":          `"Nguye\u0302\u0303n"`,
		"surrogate pair":          `"\ud83d\ude00"`,
		"a real U+FFFD":           `"\ufffd and �"`,
		"escaped backslash-u":     `"\\ud800"`,
		"10 000 combining marks":  `"a` + strings.Repeat("\u0301", 10000) + `"`,
		"unknown property is NUL": `"ok", "other": "\u0000"`,
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/bind", strings.NewReader(`{"title":`+lit+`}`))
			r.Header.Set("Content-Type", "application/json")
			status, _, raw := send(t, app, r)
			require.Equal(t, http.StatusOK, status, "body %s", raw)
		})
	}
}

func TestCheckQuery(t *testing.T) {
	app := textApp()
	for _, tc := range []struct {
		query  string
		status int
		field  string
	}{
		{"search=%00", 400, "Search"},
		{"search=a%07b", 400, "Search"},
		{"search=%C0%80", 400, "Search"},
		{"search=%FF", 400, "Search"},
		{"search=%ED%A0%80", 400, "Search"},
		{"a%00b=1", 400, "Query"},
		{"search=Nguy%E1%BB%85n%09x", 200, ""},
		// The server reads at most 4 KiB of request line and headers.
		{"search=" + strings.Repeat("%CC%81", 500), 200, ""},
	} {
		t.Run(tc.query[:min(len(tc.query), 30)], func(t *testing.T) {
			status, problem, raw := send(t, app, httptest.NewRequest(http.MethodGet, "/query?"+tc.query, nil))
			require.Equal(t, tc.status, status, "body %s", raw)
			if tc.field != "" {
				assert.Equal(t, []string{tc.field}, errorKeys(problem))
			}
		})
	}
}

func TestReadUploadRefusesBadText(t *testing.T) {
	app := textApp()
	for _, tc := range []struct {
		name, field, value, fileName, want string
	}{
		{"NUL in a field", "purpose", "a\x00", "a.pdf", "Purpose"},
		{"control in a field", "name", "bell\a", "a.pdf", "Name"},
		{"invalid UTF-8 in a field", "name", "\xff", "a.pdf", "Name"},
		{"invalid UTF-8 in the file name", "name", "ok", "a\xff.pdf", "File"},
		{"good", "name", "Hợp đồng\tmẫu", "hợp đồng.pdf", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			require.NoError(t, w.WriteField(tc.field, tc.value))
			fw, err := w.CreateFormFile("file", tc.fileName)
			require.NoError(t, err)
			_, _ = fw.Write([]byte("%PDF-1.4"))
			require.NoError(t, w.Close())
			r := httptest.NewRequest(http.MethodPost, "/upload", &buf)
			r.Header.Set("Content-Type", w.FormDataContentType())
			status, problem, raw := send(t, app, r)
			if tc.want == "" {
				require.Equal(t, http.StatusOK, status, "body %s", raw)
				return
			}
			require.Equal(t, http.StatusBadRequest, status, "body %s", raw)
			assert.Equal(t, []string{tc.want}, errorKeys(problem))
		})
	}
}

// FuzzBindText checks the rule's promise: whatever the body, Bind answers
// 200 or a 4xx, and every string it lets through is valid UTF-8 without
// C0 controls other than tab, line feed and carriage return. The seeds run
// in every `go test`.
func FuzzBindText(f *testing.F) {
	for _, lit := range badText {
		f.Add([]byte(`{"title":` + lit + `,"data":{"k":[` + lit + `]}}`))
	}
	f.Add([]byte(`{"title":"ok","tags":["a\tb"],"lines":[{"note":"\ud83d\ude00"}],"data":{"a":{"b":"c"}}}`))
	f.Add([]byte(`{"title":"` + strings.Repeat("\u0301", 10000) + `"}`))
	app := textApp()
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/bind", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		resp, err := app.Test(r, -1)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 500 {
			t.Fatalf("status %d for %q: %s", resp.StatusCode, body, raw)
		}
		if resp.StatusCode != http.StatusOK {
			return
		}
		var echo any
		require.NoError(t, json.Unmarshal(raw, &echo))
		walkStrings(echo, func(s string) {
			if httpx.TextProblem(s) != "" || strings.ContainsRune(s, utf8.RuneError) && !bytes.Contains(body, []byte("\ufffd")) && !bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`)) {
				t.Fatalf("accepted %q from body %q", s, body)
			}
		})
	})
}

func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range x {
			fn(k)
			walkStrings(e, fn)
		}
	}
}
