package httpx_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/httpx"
)

type bindAddress struct {
	Street string `json:"street" validate:"required"`
	City   string `json:"city" validate:"required,max=10"`
}

type bindQuotation struct {
	SupplierID string  `json:"supplierId" validate:"required,uuid"`
	Amount     float64 `json:"amount" validate:"gt=0"`
	Tags       []int   `json:"tags"`
}

type bindRequest struct {
	Email              string          `json:"email" validate:"required,email"`
	FullName           string          `json:"fullName" validate:"required,min=2,max=20"`
	Role               string          `json:"role" validate:"omitempty,oneof=Admin Drafter"`
	Age                int             `json:"age" validate:"omitempty,min=18,max=120"`
	Roles              []string        `json:"roles" validate:"omitempty,min=2,max=3,dive,required"`
	IsActive           *bool           `json:"isActive"`
	Address            *bindAddress    `json:"address" validate:"omitempty"`
	Quotations         []bindQuotation `json:"quotations" validate:"dive"`
	NewPassword        string          `json:"newPassword"`
	ConfirmNewPassword string          `json:"confirmNewPassword" validate:"eqfield=NewPassword"`
}

const validBody = `{"email":"a@example.com","fullName":"Ann"}`

// bindApp is a bare app with the service's error handler and one route that
// binds bindRequest and echoes it; limit > 0 adds httpx.BodyLimit.
func bindApp(limit int) *fiber.App {
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(slog.New(slog.DiscardHandler))})
	if limit > 0 {
		app.Use(httpx.BodyLimit(limit))
	}
	app.Post("/bind", func(c *fiber.Ctx) error {
		var req bindRequest
		if err := httpx.Bind(c, &req); err != nil {
			return err
		}
		return c.JSON(req)
	})
	return app
}

type bindResult struct {
	status      int
	contentType string
	problem     map[string]any
	errors      map[string][]string
	echo        bindRequest
}

func postBind(t *testing.T, app *fiber.App, contentType, body string) bindResult {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/bind", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	res := bindResult{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type")}
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(raw, &res.echo), "body %s", raw)
		return res
	}
	require.NoError(t, json.Unmarshal(raw, &res.problem), "body %s", raw)
	if e, ok := res.problem["errors"].(map[string]any); ok {
		res.errors = map[string][]string{}
		for k, v := range e {
			for _, m := range v.([]any) {
				res.errors[k] = append(res.errors[k], m.(string))
			}
		}
	}
	return res
}

func TestBindValidationMessages(t *testing.T) {
	tests := []struct {
		name string
		body string
		want map[string][]string
	}{
		{name: "required", body: `{}`, want: map[string][]string{
			"Email": {"Is required."}, "FullName": {"Is required."}}},
		{name: "email", body: `{"email":"not-an-email","fullName":"Ann"}`, want: map[string][]string{
			"Email": {"Must be a valid email address."}}},
		{name: "oneof", body: `{"email":"a@example.com","fullName":"Ann","role":"Root"}`, want: map[string][]string{
			"Role": {"Must be one of: Admin, Drafter."}}},
		{name: "min on text", body: `{"email":"a@example.com","fullName":"A"}`, want: map[string][]string{
			"FullName": {"Must be at least 2 characters long."}}},
		{name: "max on text", body: `{"email":"a@example.com","fullName":"` + strings.Repeat("A", 21) + `"}`, want: map[string][]string{
			"FullName": {"Must be at most 20 characters long."}}},
		{name: "min on number", body: `{"email":"a@example.com","fullName":"Ann","age":17}`, want: map[string][]string{
			"Age": {"Must be at least 18."}}},
		{name: "max on number", body: `{"email":"a@example.com","fullName":"Ann","age":121}`, want: map[string][]string{
			"Age": {"Must be at most 120."}}},
		{name: "min on list", body: `{"email":"a@example.com","fullName":"Ann","roles":["Admin"]}`, want: map[string][]string{
			"Roles": {"Must hold at least 2 items."}}},
		{name: "max on list", body: `{"email":"a@example.com","fullName":"Ann","roles":["a","b","c","d"]}`, want: map[string][]string{
			"Roles": {"Must hold at most 3 items."}}},
		{name: "slice element", body: `{"email":"a@example.com","fullName":"Ann","roles":["Admin",""]}`, want: map[string][]string{
			"Roles[1]": {"Is required."}}},
		{name: "nested struct", body: `{"email":"a@example.com","fullName":"Ann","address":{"city":"Hanoi-Capital"}}`, want: map[string][]string{
			"Address.Street": {"Is required."}, "Address.City": {"Must be at most 10 characters long."}}},
		{name: "struct in slice", body: `{"email":"a@example.com","fullName":"Ann","quotations":[
			{"supplierId":"0190a7e4-6f0e-7c39-9a4e-2f1a1c3b5d6e","amount":5},
			{"supplierId":"nope","amount":0}]}`, want: map[string][]string{
			"Quotations[1].SupplierId": {"Must be a UUID."}, "Quotations[1].Amount": {"Must be greater than 0."}}},
		{name: "eqfield", body: `{"email":"a@example.com","fullName":"Ann","newPassword":"x","confirmNewPassword":"y"}`, want: map[string][]string{
			"ConfirmNewPassword": {"Must match NewPassword."}}},
	}
	app := bindApp(0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := postBind(t, app, "application/json", tc.body)
			require.Equal(t, http.StatusBadRequest, res.status)
			assert.Equal(t, httpx.ProblemContentType, res.contentType)
			assert.Equal(t, "validation_failed", res.problem["code"])
			assert.Equal(t, tc.want, res.errors)
		})
	}
}

func TestBindWrongJSONTypes(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantKey string
		wantMsg string
	}{
		{name: "string for integer", body: `{"email":"a@example.com","fullName":"Ann","age":"old"}`,
			wantKey: "Age", wantMsg: "Must be an integer, not string."},
		{name: "fraction for integer", body: `{"email":"a@example.com","fullName":"Ann","age":1.5}`,
			wantKey: "Age", wantMsg: "Must be an integer"},
		{name: "number for string", body: `{"email":5,"fullName":"Ann"}`,
			wantKey: "Email", wantMsg: "Must be a string, not number."},
		{name: "string for bool pointer", body: `{"email":"a@example.com","fullName":"Ann","isActive":"yes"}`,
			wantKey: "IsActive", wantMsg: "Must be true or false, not string."},
		{name: "object for list", body: `{"email":"a@example.com","fullName":"Ann","roles":{}}`,
			wantKey: "Roles", wantMsg: "Must be an array, not object."},
		{name: "nested field", body: `{"email":"a@example.com","fullName":"Ann","address":{"city":5}}`,
			wantKey: "Address.City", wantMsg: "Must be a string, not number."},
		{name: "field of a slice element", body: `{"email":"a@example.com","fullName":"Ann","quotations":[{"amount":1},{"amount":"x"}]}`,
			wantKey: "Quotations[1].Amount", wantMsg: "Must be a number, not string."},
		{name: "element of a nested slice", body: `{"quotations":[{}, {"tags":[1, 2, "z"]}], "email":"a@example.com"}`,
			wantKey: "Quotations[1].Tags[2]", wantMsg: "Must be an integer, not string."},
		{name: "object for a slice element", body: `{"roles":["a",{"x":[1]}],"email":"a@example.com"}`,
			wantKey: "Roles[1]", wantMsg: "Must be a string, not object."},
		{name: "property names match case-insensitively", body: `{"EMAIL":"a@example.com","FullName":"Ann","AGE":"x"}`,
			wantKey: "Age", wantMsg: "Must be an integer"},
		{name: "array for the body", body: `[]`, wantKey: "Body", wantMsg: "Must be an object, not array."},
		{name: "malformed JSON", body: `{"email":`, wantKey: "Body", wantMsg: "The body is not valid JSON."},
		{name: "syntax error", body: `{"email" "a"}`, wantKey: "Body", wantMsg: "The body is not valid JSON."},
		{name: "empty body", body: ``, wantKey: "Body", wantMsg: "A JSON body is required."},
		{name: "blank body", body: " \n ", wantKey: "Body", wantMsg: "A JSON body is required."},
	}
	app := bindApp(0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := postBind(t, app, "application/json", tc.body)
			require.Equal(t, http.StatusBadRequest, res.status)
			assert.Equal(t, "validation_failed", res.problem["code"])
			require.Len(t, res.errors, 1, "errors: %v", res.errors)
			require.Contains(t, res.errors, tc.wantKey)
			assert.Contains(t, res.errors[tc.wantKey][0], tc.wantMsg)
		})
	}
}

func TestBindContentType(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		status      int
	}{
		{"application/json", "application/json", http.StatusOK},
		{"charset parameter", "application/json; charset=utf-8", http.StatusOK},
		{"upper case", "Application/JSON; Charset=UTF-8", http.StatusOK},
		{"problem+json", "application/problem+json", http.StatusOK},
		{"merge-patch+json", "application/merge-patch+json", http.StatusOK},
		{"vendor +json", "application/vnd.contractflow.v1+json; charset=utf-8", http.StatusOK},
		{"text/plain", "text/plain", http.StatusUnsupportedMediaType},
		{"text/json", "text/json", http.StatusUnsupportedMediaType},
		{"form", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"xml", "application/xml", http.StatusUnsupportedMediaType},
		{"json prefix only", "application/jsonp", http.StatusUnsupportedMediaType},
		{"missing", "", http.StatusUnsupportedMediaType},
		{"malformed", "application/json; charset", http.StatusUnsupportedMediaType},
	}
	app := bindApp(0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := postBind(t, app, tc.contentType, validBody)
			require.Equal(t, tc.status, res.status)
			if tc.status == http.StatusOK {
				assert.Equal(t, "a@example.com", res.echo.Email)
				return
			}
			assert.Equal(t, httpx.ProblemContentType, res.contentType)
			assert.Equal(t, "unsupported_media_type", res.problem["code"])
			assert.EqualValues(t, 415, res.problem["status"])
		})
	}
}

func TestBindBodyLimit(t *testing.T) {
	// validBody padded with spaces inside the object to an exact size.
	sized := func(n int) string {
		return validBody[:len(validBody)-1] + strings.Repeat(" ", n-len(validBody)) + "}"
	}
	tests := []struct {
		name   string
		limit  int
		body   string
		status int
	}{
		{name: "exactly the limit", limit: 100, body: sized(100), status: http.StatusOK},
		{name: "one byte over", limit: 100, body: sized(101), status: http.StatusRequestEntityTooLarge},
		{name: "far over", limit: 100, body: sized(10_000), status: http.StatusRequestEntityTooLarge},
		{name: "default limit", body: sized(httpx.DefaultMaxBodyBytes + 1), status: http.StatusRequestEntityTooLarge},
		{name: "default limit admits 1 MiB", body: sized(httpx.DefaultMaxBodyBytes), status: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Len(t, tc.body, len(tc.body))
			res := postBind(t, bindApp(tc.limit), "application/json", tc.body)
			require.Equal(t, tc.status, res.status)
			if tc.status == http.StatusRequestEntityTooLarge {
				assert.Equal(t, "payload_too_large", res.problem["code"])
				assert.Equal(t, httpx.ProblemContentType, res.contentType)
			}
		})
	}
}

func TestBindTrailingData(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		status int
	}{
		{name: "trailing whitespace is fine", body: validBody + " \n\t", status: http.StatusOK},
		{name: "second object", body: validBody + `{"email":"b@example.com"}`, status: http.StatusBadRequest},
		{name: "second value after space", body: validBody + ` 1`, status: http.StatusBadRequest},
		{name: "garbage", body: validBody + `garbage`, status: http.StatusBadRequest},
		{name: "stray bracket", body: validBody + `]`, status: http.StatusBadRequest},
	}
	app := bindApp(0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := postBind(t, app, "application/json", tc.body)
			require.Equal(t, tc.status, res.status)
			if tc.status == http.StatusBadRequest {
				assert.Contains(t, res.errors, "Body")
			}
		})
	}
}

func TestBindIgnoresUnknownProperties(t *testing.T) {
	res := postBind(t, bindApp(0), "application/json",
		`{"email":"a@example.com","fullName":"Ann","id":"x","phase":"Approved","nested":{"a":[1,2]}}`)
	require.Equal(t, http.StatusOK, res.status)
	assert.Equal(t, "Ann", res.echo.FullName)
}

// Fields of an embedded struct are keyed as the client sees them, without
// the embedded struct's Go name that encoding/json puts in its paths.
func TestBindEmbeddedStructKeys(t *testing.T) {
	type update struct {
		bindQuotation
		Version *int `json:"version"`
	}
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(slog.New(slog.DiscardHandler))})
	app.Post("/bind", func(c *fiber.Ctx) error {
		var req update
		if err := httpx.Bind(c, &req); err != nil {
			return err
		}
		return c.JSON(req)
	})
	for body, key := range map[string]string{
		`{"amount": "x", "supplierId": "0193a2c4-0000-7000-8000-000000000000"}`: "Amount",
		`{"tags": {}, "amount": 1}`:      "Tags",
		`{"version": "2", "amount": 1}`:  "Version",
		`{"amount": 1, "supplierId": 5}`: "SupplierId",
	} {
		got := postBind(t, app, "application/json", body)
		if _, ok := got.errors[key]; !ok || got.status != 400 {
			t.Errorf("%s: status %d, errors %v; want 400 keyed %s", body, got.status, got.errors, key)
		}
	}
}

func TestContentDisposition(t *testing.T) {
	for name, want := range map[string]string{
		`Hợp đồng "A".docx`: `attachment; filename="Hop dong _A_.docx"; filename*=UTF-8''H%E1%BB%A3p%20%C4%91%E1%BB%93ng%20%22A%22.docx`,
		"plain.pdf":         `attachment; filename="plain.pdf"; filename*=UTF-8''plain.pdf`,
		"Đề xuất\r\n.xlsx":  `attachment; filename="De xuat__.xlsx"; filename*=UTF-8''%C4%90%E1%BB%81%20xu%E1%BA%A5t%0D%0A.xlsx`,
	} {
		if got := httpx.ContentDisposition(name); got != want {
			t.Errorf("%q:\n got %s\nwant %s", name, got, want)
		}
	}
}
