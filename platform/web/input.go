package web

import (
	"maps"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/money"
)

// Reading what people type into forms: amounts written the way they write
// them, and references to records typed as a code or a name.

// amountNoise strips what ParseAmount ignores.
var amountNoise = strings.NewReplacer(" ", "", "\u00a0", "", "₫", "", "VND", "", "vnd", "")

// ParseAmount reads an amount as a person types it in their language:
// "1.250.000.000" or "1.250.000,5 ₫" in Vietnamese, "1,250,000.50" in
// English; spaces and the currency sign are ignored. An empty value is
// (0, false, nil). A value that is not an amount is a field error on field.
func ParseAmount(lang, field, s string) (money.Amount, bool, error) {
	s = amountNoise.Replace(strings.TrimSpace(s))
	if s == "" {
		return 0, false, nil
	}
	if lang == "vi" {
		s = strings.ReplaceAll(s, ".", "")
		s = strings.ReplaceAll(s, ",", ".")
	} else {
		s = strings.ReplaceAll(s, ",", "")
	}
	a, err := money.Parse(s)
	if err != nil {
		return 0, true, apperr.FieldError(field, "Must be an amount of money.")
	}
	return a, true, nil
}

// FormatAmount writes an amount for a form's input, the way ParseAmount
// reads it back: "1250000,5" in Vietnamese, "1250000.5" in English.
func FormatAmount(lang string, a money.Amount) string {
	if lang == "vi" {
		return strings.ReplaceAll(a.String(), ".", ",")
	}
	return a.String()
}

// ParseInt reads a whole number; an empty value is nil. A value that is not
// a whole number is a field error on field.
func ParseInt(field, s string) (*int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, apperr.FieldError(field, "Must be a whole number.")
	}
	return &n, nil
}

// JoinFieldErrors merges the field errors of reading a form's fields into
// one validation error, so that the form shows all of them at once; any
// other error is returned as it is.
func JoinFieldErrors(errs ...error) error {
	fields := apperr.Fields{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		ae, ok := apperr.As(err)
		if !ok || ae.Kind != apperr.KindValidation {
			return err
		}
		for f, msgs := range ae.Fields {
			fields[f] = append(fields[f], msgs...)
		}
	}
	return fields.Err()
}

// Choice is one record a typed reference may mean.
type Choice struct{ ID, Code, Name string }

// Pick turns what a person typed into a reference field (a record's code,
// words of its name, or an id a select sent) into one record's id: an id is
// taken as it is (the service checks it), a record whose code is exactly
// what was typed wins, and a single match is taken. Nothing typed is ("",
// nil, nil). Otherwise it answers a field error on field with the
// candidates (none when nothing matches), for the form to offer as a
// choice. search returns up to a few records matching a text.
func Pick(field, typed string, search func(text string) ([]Choice, error)) (string, []Choice, error) {
	typed = strings.TrimSpace(typed)
	if typed == "" {
		return "", nil, nil
	}
	if _, err := uuid.Parse(typed); err == nil {
		return typed, nil, nil
	}
	found, err := search(typed)
	if err != nil {
		return "", nil, err
	}
	for _, c := range found {
		if strings.EqualFold(c.Code, typed) {
			return c.ID, nil, nil
		}
	}
	switch len(found) {
	case 0:
		return "", nil, apperr.FieldError(field, "Nothing matches; type a code or words of the name.")
	case 1:
		return found[0].ID, nil, nil
	}
	return "", found, apperr.FieldError(field, "Several records match; choose one.")
}

// The messages of the field errors above.
var inputMessages = map[string]map[string]string{
	"vi": {
		"field.Must be an amount of money.":                        "Phải là một số tiền, ví dụ 1.250.000.",
		"field.Must be a whole number.":                            "Phải là một số nguyên.",
		"field.Nothing matches; type a code or words of the name.": "Không tìm thấy; hãy nhập mã hoặc một phần tên.",
		"field.Several records match; choose one.":                 "Có nhiều kết quả phù hợp; hãy chọn một.",
	},
}

func init() {
	for lang, m := range inputMessages {
		maps.Copy(platformMessages[lang], m)
	}
}
