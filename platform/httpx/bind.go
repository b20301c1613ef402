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
	"sync"
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
		return decodeError(body, dst, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apperr.FieldError("Body", "The body must hold exactly one JSON value.")
	}
	return checkBodyText(body, dst)
}

func decodeError(body []byte, dst any, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var fieldErr interface{ Field() string }
	switch {
	case errors.As(err, &typeErr):
		field := "Body"
		if typeErr.Field != "" {
			typeErr.Field = dropEmbedded(reflect.TypeOf(dst), typeErr.Field)
			field = pascalPath(typeErr.Field)
			// encoding/json drops array indices ("quotations.amount"); find
			// them so the key matches the validator's "Quotations[1].Amount".
			if p := pathAt(body, typeErr.Offset, reflect.TypeOf(dst)); p != "" && strings.EqualFold(stripIndices(p), typeErr.Field) {
				field = p
			}
		}
		return apperr.FieldError(field, fmt.Sprintf("Must be %s, not %s.", describe(typeErr.Type), valueKind(typeErr.Value)))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.FieldError("Body", "The body is not valid JSON.")
	case errors.As(err, &fieldErr):
		return apperr.FieldError(pascalPath(fieldErr.Field()), err.Error())
	default:
		// A type's own UnmarshalJSON refused the value (e.g. an unknown enum name).
		return apperr.FieldError("Body", err.Error())
	}
}

// valueKind names what the client sent: json reports a kind ("string",
// "number") for its own errors and the raw text for ours.
func valueKind(v string) string {
	switch {
	case v == "":
		return "empty"
	case v[0] == '"':
		return "a string"
	case v == "true" || v == "false":
		return "a boolean"
	case v[0] == '{':
		return "an object"
	case v[0] == '[':
		return "an array"
	case v == "null":
		return "null"
	}
	return v
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
	if d, ok := reflect.New(t).Elem().Interface().(interface{ JSONDescription() string }); ok {
		return d.JSONDescription()
	}
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

// pascalPath converts a dotted JSON path: "address.city" → "Address.City".
func pascalPath(p string) string {
	parts := strings.Split(p, ".")
	for i, s := range parts {
		parts[i] = pascal(s)
	}
	return strings.Join(parts, ".")
}

// pathAt walks body to the JSON value that ends at offset (a scalar) or
// starts just before it (an object or array), the way encoding/json reports
// an UnmarshalTypeError, and returns its path in the validator's notation,
// with property names as dst's type spells them however the client cased
// them: "Quotations[1].Amount". It returns "" when it cannot tell.
// dropEmbedded removes the names of embedded structs that encoding/json
// puts in its field paths ("CreateRequest.value" → "value"): clients never
// see them.
func dropEmbedded(t reflect.Type, field string) string {
	var out []string
	for _, seg := range strings.Split(field, ".") {
		t = deref(t)
		if t != nil && t.Kind() == reflect.Struct {
			if sf, ok := t.FieldByName(seg); ok && sf.Anonymous {
				t = sf.Type
				continue
			}
			t = jsonFieldType(t, seg)
		} else {
			t = nil
		}
		out = append(out, seg)
	}
	return strings.Join(out, ".")
}

// jsonFieldType is the type of the struct field that JSON name maps to.
func jsonFieldType(t reflect.Type, name string) reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if strings.EqualFold(tag, name) || (tag == "" && strings.EqualFold(f.Name, name)) {
			return f.Type
		}
	}
	return nil
}

func pathAt(body []byte, offset int64, dst reflect.Type) string {
	type frame struct {
		typ    reflect.Type // the Go type decoded into; nil when unknown
		array  bool
		key    string // object: the key whose value comes next
		hasKey bool
		index  int // array: the index of the next element
	}
	var stack []frame
	next := func() { // a value of the innermost container has been read
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].hasKey = false
			}
		}
	}
	// child is the Go type of the value about to be read.
	child := func() reflect.Type {
		if len(stack) == 0 {
			return deref(dst)
		}
		f := stack[len(stack)-1]
		switch {
		case f.typ == nil:
			return nil
		case f.array && (f.typ.Kind() == reflect.Slice || f.typ.Kind() == reflect.Array):
			return deref(f.typ.Elem())
		case f.typ.Kind() == reflect.Map:
			return deref(f.typ.Elem())
		case f.typ.Kind() == reflect.Struct:
			if sf, ok := jsonField(f.typ, f.key); ok {
				return deref(sf.Type)
			}
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		isKey := len(stack) > 0 && !stack[len(stack)-1].array && !stack[len(stack)-1].hasKey
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			next()
			continue
		}
		if isKey {
			f := &stack[len(stack)-1]
			f.key, f.hasKey = tok.(string), true
			if f.typ != nil && f.typ.Kind() == reflect.Struct {
				if sf, ok := jsonField(f.typ, f.key); ok {
					f.key = jsonName(sf)
				}
			}
			continue
		}
		if dec.InputOffset() >= offset {
			var b strings.Builder
			for _, f := range stack {
				if f.array {
					fmt.Fprintf(&b, "[%d]", f.index)
					continue
				}
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(pascal(f.key))
			}
			return b.String()
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{typ: child(), array: d == '['})
			continue
		}
		next()
	}
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonField finds the field of struct type t that the JSON key decodes
// into, matching names case-insensitively as encoding/json does.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	for _, f := range jsonFieldsOf(t) {
		if strings.EqualFold(f.name, key) {
			return f.StructField, true
		}
	}
	return reflect.StructField{}, false
}

type namedField struct {
	reflect.StructField
	name string // its JSON name
}

// jsonFields holds, per struct type, the fields a JSON property may name:
// every property of every request body is looked up (checkBodyText), and
// walking reflect.VisibleFields each time was 6 % of a contract create.
var jsonFields sync.Map // reflect.Type → []namedField

func jsonFieldsOf(t reflect.Type) []namedField {
	if fs, ok := jsonFields.Load(t); ok {
		return fs.([]namedField)
	}
	var fs []namedField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || (f.Anonymous && f.Tag.Get("json") == "") {
			continue
		}
		if name := jsonName(f); name != "-" {
			fs = append(fs, namedField{f, name})
		}
	}
	jsonFields.Store(t, fs)
	return fs
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// stripIndices turns "Quotations[1].Amount" back into "Quotations.Amount".
func stripIndices(p string) string {
	var b strings.Builder
	depth := 0
	for _, r := range p {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
