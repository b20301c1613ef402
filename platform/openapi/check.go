package openapi

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// ErrUndocumentedRoute is returned by Check for a request whose method and
// path are not in the document.
var ErrUndocumentedRoute = errors.New("route not in the OpenAPI document")

// ResponseChecker checks responses against the document, for tests: the
// status must be documented for the operation, and the body must match the
// documented schema of its content type. Requests are not checked (tests
// send invalid requests on purpose) and neither is authentication.
type ResponseChecker struct {
	router routers.Router
	opts   openapi3filter.Options
	// mu serializes validation: kin-openapi compiles schemas lazily, and the
	// harness may check responses from parallel tests.
	mu sync.Mutex
}

var registerDecoders sync.Once

// NewResponseChecker loads and validates doc and prepares its router.
func NewResponseChecker(doc []byte) (*ResponseChecker, error) {
	registerDecoders.Do(func() {
		if openapi3filter.RegisteredBodyDecoder(problemJSON) == nil {
			openapi3filter.RegisterBodyDecoder(problemJSON, openapi3filter.JSONBodyDecoder)
		}
	})
	t, err := load(doc)
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(t)
	if err != nil {
		return nil, fmt.Errorf("openapi: router: %w", err)
	}
	return &ResponseChecker{
		router: router,
		opts: openapi3filter.Options{
			AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
			ExcludeRequestBody:    true,
			IncludeResponseStatus: true,
			MultiError:            true,
			// kin-openapi asserts date, date-time and int32/int64 by
			// itself; identifiers and e-mail addresses are worth checking
			// too (UUID v7 needs RFC 9562's pattern).
			SchemaValidationOptions: []openapi3.SchemaValidationOption{
				openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
				openapi3.WithStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail)),
			},
		},
	}, nil
}

const problemJSON = "application/problem+json"

// Check returns an error when the request's route is not in the document
// (wrapping ErrUndocumentedRoute), when status is not documented for the
// operation, when a documented header is missing or wrong, or when the body
// does not match the schema documented for its content type. Bodies of
// binary downloads (spreadsheets, documents, PDF, octet streams) are not
// decoded; only their content type is checked. A HEAD request is checked as
// its GET, without a body.
func (rc *ResponseChecker) Check(req *http.Request, status int, header http.Header, body []byte) error {
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.Path, status)
	lookup := req
	if req.Method == http.MethodHead {
		lookup = req.Clone(req.Context())
		lookup.Method = http.MethodGet
	}
	route, params, err := rc.router.FindRoute(lookup)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", what, ErrUndocumentedRoute, err)
	}
	if req.Method == http.MethodHead {
		return nil
	}

	opts := rc.opts
	binary := isBinary(header.Get("Content-Type"))
	if binary {
		opts.ExcludeResponseBody = true
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      route,
			Options:    &opts,
		},
		Status:  status,
		Header:  header,
		Options: &opts,
	}
	in.SetBodyBytes(body)

	rc.mu.Lock()
	err = openapi3filter.ValidateResponse(context.Background(), in)
	rc.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s (operation %s %s): %w", what, route.Method, route.Path, err)
	}
	if binary {
		if err := checkContentType(route.Operation, status, header.Get("Content-Type")); err != nil {
			return fmt.Errorf("%s (operation %s %s): %w", what, route.Method, route.Path, err)
		}
	}
	return nil
}

// isBinary reports whether a content type is a download whose body is not
// JSON and is not worth decoding.
func isBinary(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "application/vnd.openxmlformats-officedocument.") ||
		mt == "application/octet-stream" || mt == "application/pdf"
}

// checkContentType does for binary responses what body validation would
// have done first: the content type must be one the status documents.
func checkContentType(op *openapi3.Operation, status int, contentType string) error {
	ref := op.Responses.Status(status)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil || ref.Value == nil || len(ref.Value.Content) == 0 {
		return nil
	}
	if ref.Value.Content.Get(contentType) == nil {
		return fmt.Errorf("response content type %q is not documented", contentType)
	}
	return nil
}
