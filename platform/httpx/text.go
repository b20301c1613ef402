package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
)

// The text input rule (DESIGN §1 "Text input"), kept here so that every
// JSON body, query string and multipart field obeys the same one: text is
// valid UTF-8 (no overlong forms, no lone surrogates, also none escaped in
// JSON as \ud800) and holds no C0 control character other than tab, line
// feed and carriage return. NUL is the reason it exists: PostgreSQL text and
// jsonb cannot hold it, so it was a 500 there and stored on SQLite; the
// other controls end up in exports and rendered documents, whose XML cannot
// hold them either. Anything else, such as a long run of combining marks, is
// text like any other and is left to each field's own length rule.

// TextProblem says what is wrong with s as text input, or "" when it is
// acceptable.
func TextProblem(s string) string {
	if !utf8.ValidString(s) {
		return "Must be valid UTF-8 text."
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 && b != '\t' && b != '\n' && b != '\r' {
			return controlMessage(rune(b))
		}
	}
	return ""
}

func controlMessage(r rune) string {
	if r == 0 {
		return "Must not contain a NUL character (U+0000)."
	}
	return fmt.Sprintf("Must not contain the control character U+%04X; only tab, line feed and carriage return are allowed.", r)
}

// CheckQuery refuses a request whose query string breaks the text rule,
// naming the parameter (PascalCase, as validation errors do). The kernel
// runs it on every API route, after the guard, so that 401 and 403 still
// come first.
func CheckQuery(c *fiber.Ctx) error {
	fields := apperr.Fields{}
	c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) {
		key := string(k)
		if msg := TextProblem(key); msg != "" {
			fields.Add("Query", "A parameter name "+lower(msg))
			return
		}
		if msg := TextProblem(string(v)); msg != "" {
			fields.Add(pascal(key), msg)
		}
	})
	if err := fields.Err(); err != nil {
		return err
	}
	return c.Next()
}

func lower(msg string) string { return strings.ToLower(msg[:1]) + msg[1:] }

// checkBodyText walks a JSON body that decoded into dst and refuses the
// first string, value or property name, that breaks the text rule, naming
// it by its path in the validator's notation ("Quotations[1].Note"). It
// reads the raw bytes, because encoding/json silently turns invalid UTF-8
// and escaped lone surrogates into U+FFFD. Properties dst does not have are
// ignored, like the rest of an unknown property.
func checkBodyText(body []byte, dst any) error {
	type frame struct {
		typ    reflect.Type // the Go type decoded into; nil when any
		skip   bool         // a property dst ignores
		array  bool
		key    string
		hasKey bool
		index  int
	}
	var stack []frame
	path := func() string {
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
		if b.Len() == 0 {
			return "Body"
		}
		return b.String()
	}
	// child describes the value about to be read in the innermost container.
	child := func() (reflect.Type, bool) {
		if len(stack) == 0 {
			return deref(reflect.TypeOf(dst)), false
		}
		f := stack[len(stack)-1]
		switch {
		case f.skip:
			return nil, true
		case f.typ == nil:
			return nil, false
		case f.typ.Kind() == reflect.Slice || f.typ.Kind() == reflect.Array || f.typ.Kind() == reflect.Map:
			return deref(f.typ.Elem()), false
		case f.typ.Kind() == reflect.Struct:
			if sf, ok := jsonField(f.typ, f.key); ok {
				return deref(sf.Type), false
			}
			return nil, true
		}
		return nil, false
	}
	next := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].hasKey = false
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or a body decode has already judged
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '}' || d == ']' {
				stack = stack[:len(stack)-1]
				next()
				continue
			}
			typ, skip := child()
			stack = append(stack, frame{typ: typ, skip: skip, array: d == '['})
			continue
		}
		s, isString := tok.(string)
		isKey := len(stack) > 0 && !stack[len(stack)-1].array && !stack[len(stack)-1].hasKey
		if isKey {
			f := &stack[len(stack)-1]
			f.key, f.hasKey = s, true
			// A struct's property names are its own; one it lacks is ignored.
			named := f.typ != nil && f.typ.Kind() == reflect.Struct
			if msg := stringProblem(body[start:dec.InputOffset()], s); msg != "" && !f.skip && !named {
				// Name the object holding the property: its name is the fault.
				stack = stack[:len(stack)-1]
				return apperr.FieldError(path(), "A property name "+lower(msg))
			}
			if f.typ != nil && f.typ.Kind() == reflect.Struct {
				if sf, ok := jsonField(f.typ, f.key); ok {
					f.key = jsonName(sf)
				}
			}
			continue
		}
		if isString {
			if _, skip := child(); !skip {
				if msg := stringProblem(body[start:dec.InputOffset()], s); msg != "" {
					return apperr.FieldError(path(), msg)
				}
			}
		}
		next()
	}
}

// stringProblem judges one JSON string: raw is its text in the body (after
// any separator and blanks), s what it decoded to.
func stringProblem(raw []byte, s string) string {
	if i := bytes.IndexByte(raw, '"'); i >= 0 {
		raw = raw[i:]
	}
	if !utf8.Valid(raw) {
		return "Must be valid UTF-8 text."
	}
	if msg := TextProblem(s); msg != "" {
		return msg
	}
	if !strings.ContainsRune(s, utf8.RuneError) {
		return "" // no replacement character, so no lone surrogate either
	}
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' || i+6 > len(raw) {
			i++ // an escape of one character (\\, \", \n …)
			continue
		}
		r, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
		if err != nil {
			return ""
		}
		switch {
		case r >= 0xD800 && r < 0xDC00: // must be followed by a low surrogate
			if i+12 > len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return loneSurrogate
			}
			lo, err := strconv.ParseUint(string(raw[i+8:i+12]), 16, 32)
			if err != nil || lo < 0xDC00 || lo > 0xDFFF {
				return loneSurrogate
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return loneSurrogate
		default:
			i += 5
		}
	}
	return ""
}

const loneSurrogate = "Must be valid UTF-8 text: it holds an unpaired surrogate (\\uD800–\\uDFFF)."
