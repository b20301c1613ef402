package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"strings"
	"unicode"

	"github.com/go-playground/validator/v10"
	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
)

// DefaultMaxBodyBytes applies when no middleware set a limit.
const DefaultMaxBodyBytes = 1 << 20

// validate is safe for concurrent use and caches struct metadata.
var validate = newValidator()

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			name = f.Name
		}
		return pascal(name)
	})
	return v
}

// Validator exposes the shared validator so modules can register their own
// rules (e.g. a tax-code format) at provision time.
func Validator() *validator.Validate { return validate }

// Bind reads a JSON request body into dst and validates it. It answers 415
// for a body that is not JSON, 413 over the limit, and 400 with field errors
// keyed by PascalCase property names for malformed JSON, wrong types and
// failed rules.
func Bind(c *fiber.Ctx, dst any) error {
	if err := checkJSON(c); err != nil {
		return err
	}
	if err := decode(c.Body(), dst); err != nil {
		return err
	}
	return Validate(dst)
}

func checkJSON(c *fiber.Ctx) error {
	ct := c.Get(fiber.HeaderContentType)
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || (mt != fiber.MIMEApplicationJSON && !strings.HasSuffix(mt, "+json")) {
		return apperr.New(apperr.KindUnsupportedMedia, "unsupported_media_type",
			"Send the body as application/json.")
	}
	limit, _ := c.Locals(localMaxBody).(int)
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if len(c.Body()) > limit {
		return apperr.New(apperr.KindTooLarge, "payload_too_large",
			fmt.Sprintf("The request body is larger than %d bytes.", limit))
	}
	return nil
}

func decode(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apperr.FieldError("Body", "A JSON body is required.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apperr.FieldError("Body", "The body must hold exactly one JSON value.")
	}
	return nil
}

func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var fieldErr interface{ Field() string }
	switch {
	case errors.As(err, &typeErr):
		field := "Body"
		if typeErr.Field != "" {
			field = pascalPath(typeErr.Field)
		}
		return apperr.FieldError(field, fmt.Sprintf("Must be %s, not %s.", describe(typeErr.Type), typeErr.Value))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.FieldError("Body", "The body is not valid JSON.")
	case errors.As(err, &fieldErr):
		return apperr.FieldError(pascalPath(fieldErr.Field()), err.Error())
	default:
		// A type's own UnmarshalJSON refused the value (e.g. an unknown enum name).
		return apperr.FieldError("Body", err.Error())
	}
}

// Validate runs the struct's `validate` rules and returns field errors.
func Validate(v any) error {
	err := validate.Struct(v)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return apperr.Internal(err)
	}
	fields := apperr.Fields{}
	for _, fe := range verrs {
		fields.Add(fieldPath(fe), message(fe))
	}
	return fields.Err()
}

// fieldPath drops the root struct's name: "createReq.Roles[0]" → "Roles[0]".
func fieldPath(fe validator.FieldError) string {
	ns := fe.Namespace()
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return ns
}

func message(fe validator.FieldError) string {
	p := fe.Param()
	switch fe.Tag() {
	case "required", "required_if", "required_unless", "required_with":
		return "Is required."
	case "email":
		return "Must be a valid email address."
	case "oneof":
		return "Must be one of: " + strings.ReplaceAll(p, " ", ", ") + "."
	case "min":
		if isText(fe) {
			return "Must be at least " + p + " characters long."
		}
		if isList(fe) {
			return "Must hold at least " + p + " items."
		}
		return "Must be at least " + p + "."
	case "max":
		if isText(fe) {
			return "Must be at most " + p + " characters long."
		}
		if isList(fe) {
			return "Must hold at most " + p + " items."
		}
		return "Must be at most " + p + "."
	case "gt":
		return "Must be greater than " + p + "."
	case "gte":
		return "Must be at least " + p + "."
	case "uuid", "uuid4", "uuid7":
		return "Must be a UUID."
	case "eqfield":
		return "Must match " + p + "."
	case "nefield":
		return "Must differ from " + p + "."
	case "dive", "unique":
		return "Must not repeat a value."
	}
	return "Is invalid (" + fe.Tag() + ")."
}

func isText(fe validator.FieldError) bool { return fe.Kind() == reflect.String }

func isList(fe validator.FieldError) bool {
	return fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map || fe.Kind() == reflect.Array
}

func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.String()
}

// pascal upper-cases the first letter: "currentPassword" → "CurrentPassword".
func pascal(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// pascalPath converts a dotted JSON path: "quotations.0.amount" → "Quotations.0.Amount".
func pascalPath(p string) string {
	parts := strings.Split(p, ".")
	for i, s := range parts {
		parts[i] = pascal(s)
	}
	return strings.Join(parts, ".")
}
