package core

import (
	"context"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/apperr"
)

// Head holds the input fields every resource shares; the generic code
// normalises and checks them itself, so they carry no validate tags.
type Head struct {
	Code string `json:"code"`
	Name string `json:"name"`
	// IsActive defaults to true when omitted, on create and on update.
	IsActive *bool `json:"isActive"`
	// Version, when sent on update, must be the record's current version.
	Version *int `json:"version"`
}

func (h *Head) head() *Head { return h }

// MaxNameLength bounds names of every resource.
const MaxNameLength = 200

var codePattern = regexp.MustCompile(`^[A-Z0-9_-]{2,32}$`)

// normalizeCode is how codes are stored and compared: trimmed, upper case.
func normalizeCode(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// checkHead normalises and checks the shared fields.
func checkHead(h *Head, f apperr.Fields) {
	h.Code = normalizeCode(h.Code)
	h.Name = strings.TrimSpace(h.Name)
	switch {
	case h.Code == "":
		f.Add("Code", "Is required.")
	case !codePattern.MatchString(h.Code):
		f.Add("Code", "Must be 2 to 32 characters, each a letter A-Z, a digit, '-' or '_'.")
	}
	switch n := len([]rune(h.Name)); {
	case n == 0:
		f.Add("Name", "Is required.")
	case n > MaxNameLength:
		f.Add("Name", "Must be at most 200 characters long.")
	}
}

// trimAll trims optional text fields and turns blank ones into null.
func trimAll(ps ...**string) {
	for _, p := range ps {
		if *p == nil {
			continue
		}
		if s := strings.TrimSpace(**p); s != "" {
			*p = &s
		} else {
			*p = nil
		}
	}
}

// taxCodePattern is a Vietnamese tax code: 10 digits, or 13 for a branch,
// whose last three may be set off by '-' (0101234567 or 0101234567-001).
var taxCodePattern = regexp.MustCompile(`^(\d{10})(?:-?(\d{3}))?$`)

// checkTaxCode validates a tax code and writes branch codes one way,
// 0101234567-001, so they display and search alike.
func checkTaxCode(p *string, f apperr.Fields) {
	if p == nil {
		return
	}
	m := taxCodePattern.FindStringSubmatch(*p)
	if m == nil {
		f.Add("TaxCode", "Must be 10 digits, or 13 digits written 0101234567-001.")
		return
	}
	if m[2] != "" {
		s := m[1] + "-" + m[2]
		*p = s
	}
}

// checkDate parses an optional date field.
func checkDate(field string, p *string, f apperr.Fields) *Date {
	if p == nil {
		return nil
	}
	d, err := ParseDate(*p)
	if err != nil {
		f.Add(field, "Must be a date written YYYY-MM-DD, e.g. 2026-11-21.")
		return nil
	}
	return &d
}

// userNames is what the module needs of the identity module's Directory.
type userNames interface {
	Names(ctx context.Context, ids []string) (map[string]string, error)
}

// checkManager refuses a manager who is not a user.
func checkManager(ctx context.Context, users userNames, p *string, f apperr.Fields) error {
	if p == nil {
		return nil
	}
	const msg = "Must be the id of an existing user."
	if _, err := uuid.Parse(*p); err != nil {
		f.Add("ManagerUserId", msg)
		return nil
	}
	names, err := users.Names(ctx, []string{*p})
	if err != nil {
		return err
	}
	if _, ok := names[*p]; !ok {
		f.Add("ManagerUserId", msg)
	}
	return nil
}

// mergeFields adds the field errors of err to f; any other error comes back.
func mergeFields(f apperr.Fields, err error) error {
	if err == nil {
		return nil
	}
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindValidation {
		return err
	}
	for k, msgs := range e.Fields {
		for _, m := range msgs {
			f.Add(k, m)
		}
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
