package render

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/contractflow/contractflow/platform/apperr"
)

// FieldType is the kind of value a placeholder takes.
type FieldType string

// The field types of a fieldSpec.
const (
	Text   FieldType = "text"
	Number FieldType = "number"
	Money  FieldType = "money"
	Date   FieldType = "date"
)

// FieldTypes lists the valid field types.
var FieldTypes = []FieldType{Text, Number, Money, Date}

// Field is one entry of a template's fieldSpec: a placeholder, how a form
// labels it, what it holds and whether rendering needs it.
type Field struct {
	Name     string    `json:"name"`
	Label    string    `json:"label"`
	Type     FieldType `json:"type"`
	Required bool      `json:"required"`
}

// Limits of placeholder values.
const (
	MaxTextLength = 10_000 // characters of one text value
	MaxValues     = 500    // values in one render request
	maxIntDigits  = 15     // digits before the decimal point (what a spreadsheet keeps exactly)
	maxFracDigits = 4
)

// Value is a placeholder's value, ready to write: Text for documents and
// text cells, Number for a spreadsheet cell that is exactly the placeholder
// of a number or money field.
type Value struct {
	Type   FieldType
	Text   string
	Number float64
}

// IsNumber reports whether the value becomes a numeric cell.
func (v Value) IsNumber() bool { return v.Type == Number || v.Type == Money }

// Values are the placeholder values of one render, by placeholder name.
type Values map[string]Value

// The name expressions are compiled on first use: a Unicode class repeated
// {0,63} times compiles to ~2.7 MiB, which a service that renders no
// document would hold for nothing.
var (
	nameRe        = lazyRegexp(`^[\p{L}_][\p{L}\p{N}_.\-]{0,63}$`)
	placeholderRe = lazyRegexp(`\{\{\s*([\p{L}_][\p{L}\p{N}_.\-]{0,63})\s*\}\}`)
	exactRe       = lazyRegexp(`^\s*\{\{\s*([\p{L}_][\p{L}\p{N}_.\-]{0,63})\s*\}\}\s*$`)
	decimalRe     = regexp.MustCompile(`^([+-]?)(\d+)(?:\.(\d+))?$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// ValidName reports whether s can be a placeholder name: a letter or "_"
// then letters, digits, "_", "." or "-", at most 64 characters.
func ValidName(s string) bool { return nameRe().MatchString(s) }

// FieldKey is the key of a placeholder in a validation problem's errors:
// like every property name there, PascalCase ("partyBName" → "PartyBName").
func FieldKey(name string) string {
	r, size := utf8.DecodeRuneInString(name)
	return string(unicode.ToUpper(r)) + name[size:]
}

// Prepare checks data against spec and turns each value into the text (and,
// for numbers, the number) to write. Fields of the spec are looked up by
// name, case-insensitively when no key matches exactly; required fields must
// be present and not blank; text holds at most MaxTextLength characters;
// number and money take a JSON number or a numeric string; date takes
// "YYYY-MM-DD". Keys the spec does not name are written as text when they
// are strings or numbers (a too long one is refused) and ignored otherwise,
// so free-form data such as a contract's draftData can be passed as it is.
// Every problem is reported, keyed by field.
func Prepare(spec []Field, data map[string]any) (Values, error) {
	fields := apperr.Fields{}
	if len(data) > MaxValues {
		fields.Add("Body", fmt.Sprintf("Send at most %d values.", MaxValues))
		return nil, fields.Err()
	}
	vals := make(Values, len(data))
	used := map[string]bool{}
	for _, f := range spec {
		key, raw, ok := lookup(data, f.Name)
		if ok {
			used[key] = true
		}
		if !ok || raw == nil || (f.Type != Text && isBlank(raw)) || (f.Required && isBlank(raw)) {
			if f.Required {
				fields.Add(FieldKey(f.Name), "Is required.")
			}
			continue
		}
		v, msg := convert(f.Type, raw)
		if msg != "" {
			fields.Add(FieldKey(f.Name), msg)
			continue
		}
		vals[f.Name] = v
	}
	for key, raw := range data {
		if used[key] || !ValidName(key) {
			continue
		}
		if v, msg := convert(Text, raw); msg == "" {
			vals[key] = v
		} else if s, ok := raw.(string); ok && utf8.RuneCountInString(s) > MaxTextLength {
			fields.Add(FieldKey(key), msg)
		}
	}
	if err := fields.Err(); err != nil {
		return nil, err
	}
	return vals, nil
}

// lookup finds a field's value by exact name, else case-insensitively.
func lookup(data map[string]any, name string) (string, any, bool) {
	if v, ok := data[name]; ok {
		return name, v, true
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		if strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", nil, false
	}
	sort.Strings(keys) // deterministic when a client sends two spellings
	return keys[0], data[keys[0]], true
}

func isBlank(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	}
	return false
}

// convert turns one raw value into a Value of type t, or returns the
// message to show.
func convert(t FieldType, raw any) (Value, string) {
	switch t {
	case Number, Money:
		s, ok := decimalText(raw)
		if !ok {
			return Value{}, "Must be a number."
		}
		m := decimalRe.FindStringSubmatch(s)
		if m == nil {
			return Value{}, "Must be a number."
		}
		if len(strings.TrimLeft(m[2], "0")) > maxIntDigits || len(m[3]) > maxFracDigits {
			return Value{}, fmt.Sprintf("Must have at most %d digits before and %d after the decimal point.", maxIntDigits, maxFracDigits)
		}
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return Value{}, "Must be a number."
		}
		return Value{Type: t, Text: formatDecimal(m[1], m[2], m[3], t == Money), Number: n}, ""
	case Date:
		switch x := raw.(type) {
		case time.Time:
			return Value{Type: Date, Text: x.Format("02/01/2006")}, ""
		case string:
			d, err := time.Parse(time.DateOnly, strings.TrimSpace(x))
			if err != nil {
				return Value{}, "Must be a date written YYYY-MM-DD."
			}
			return Value{Type: Date, Text: d.Format("02/01/2006")}, ""
		}
		return Value{}, "Must be a date written YYYY-MM-DD."
	default:
		var s string
		switch x := raw.(type) {
		case string:
			s = x
		default:
			n, ok := decimalText(raw)
			if !ok {
				return Value{}, "Must be text or a number."
			}
			s = n
		}
		s = strings.ReplaceAll(s, "\r\n", "\n")
		if utf8.RuneCountInString(s) > MaxTextLength {
			return Value{}, fmt.Sprintf("Must be at most %d characters long.", MaxTextLength)
		}
		return Value{Type: Text, Text: s}, ""
	}
}

// decimalText returns the decimal notation of a number given as a JSON
// number, a Go number or a numeric string.
func decimalText(raw any) (string, bool) {
	switch x := raw.(type) {
	case json.Number:
		return normalizeNumber(x.String())
	case string:
		return normalizeNumber(strings.TrimSpace(x))
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", false
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case float32:
		return decimalText(float64(x))
	case int:
		return strconv.Itoa(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint:
		return strconv.FormatUint(uint64(x), 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case fmt.Stringer: // decimal types such as shopspring/decimal
		return normalizeNumber(x.String())
	}
	return "", false
}

// normalizeNumber accepts plain decimals and JSON exponent notation
// ("1.25e9"), returning plain decimal notation.
func normalizeNumber(s string) (string, bool) {
	if decimalRe.MatchString(s) {
		return s, true
	}
	if !strings.ContainsAny(s, "eE") || len(s) > 40 {
		return "", false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	return strconv.FormatFloat(f, 'f', -1, 64), true
}

// formatDecimal writes a number the Vietnamese way: "," before decimals
// and, for money, "." between thousands (1.250.000.000). A fraction of
// zeros is dropped.
func formatDecimal(sign, intPart, frac string, group bool) string {
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	frac = strings.TrimRight(frac, "0")
	if sign == "+" || (intPart == "0" && frac == "") {
		sign = ""
	}
	var b strings.Builder
	b.WriteString(sign)
	if group {
		for i, c := range intPart {
			if i > 0 && (len(intPart)-i)%3 == 0 {
				b.WriteByte('.')
			}
			b.WriteRune(c)
		}
	} else {
		b.WriteString(intPart)
	}
	if frac != "" {
		b.WriteByte(',')
		b.WriteString(frac)
	}
	return b.String()
}

// Placeholders lists the placeholder names in s, in order of appearance.
func Placeholders(s string) []string {
	var out []string
	for _, m := range placeholderRe().FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// replaceText fills the placeholders of s that have a value; esc, when not
// nil, escapes each value for its context.
func replaceText(s string, vals Values, esc func(string) string) (string, bool) {
	if !strings.Contains(s, "{{") {
		return s, false
	}
	changed := false
	out := placeholderRe().ReplaceAllStringFunc(s, func(m string) string {
		name := placeholderRe().FindStringSubmatch(m)[1]
		v, ok := vals[name]
		if !ok {
			return m
		}
		changed = true
		if esc != nil {
			return esc(v.Text)
		}
		return v.Text
	})
	return out, changed
}
