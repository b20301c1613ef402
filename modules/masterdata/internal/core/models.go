package core

import (
	"database/sql/driver"
	"fmt"
	"time"
)

// Record is the part every master-data row shares: identity, code and name,
// the active flag, the row version and the audit trail. The models embed it,
// and the generic code in resource.go works on it.
type Record struct {
	ID       string `json:"id"`
	Code     string `json:"code"`
	Name     string `json:"name"`
	IsActive bool   `json:"isActive"`
	Version  int    `json:"version"`
	// The clock, not GORM, sets the audit times.
	CreatedAt time.Time `json:"createdAt" gorm:"autoCreateTime:false"`
	CreatedBy *string   `json:"createdBy"`
	UpdatedAt time.Time `json:"updatedAt" gorm:"autoUpdateTime:false"`
	UpdatedBy *string   `json:"updatedBy"`
	// SearchText is the folded code, name and other searchable fields that
	// list searches match (see fold); the store keeps it in step.
	SearchText string     `json:"-"`
	DeletedAt  *time.Time `json:"-"`
	DeletedBy  *string    `json:"-"`
}

func (r *Record) record() *Record { return r }

// utc presents the audit times in UTC whatever zone the driver read them in.
func (r *Record) utc() {
	r.CreatedAt = r.CreatedAt.UTC()
	r.UpdatedAt = r.UpdatedAt.UTC()
}

// Date is a calendar date without time or zone, written 2026-11-21 in JSON
// and stored in a DATE column.
type Date string

// DateLayout is how dates are written.
const DateLayout = "2006-01-02"

// ParseDate reads a date written 2026-11-21.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return "", err
	}
	return Date(t.Format(DateLayout)), nil
}

// Value stores the date as text, which both engines read into DATE.
func (d Date) Value() (driver.Value, error) { return string(d), nil }

// Scan reads a DATE column: Postgres and the SQLite driver hand over a
// time.Time, a plain SQLite read hands over the text.
func (d *Date) Scan(v any) error {
	switch x := v.(type) {
	case time.Time:
		*d = Date(x.Format(DateLayout))
	case string:
		return d.scanText(x)
	case []byte:
		return d.scanText(string(x))
	default:
		return fmt.Errorf("scan date: unexpected %T", v)
	}
	return nil
}

func (d *Date) scanText(s string) error {
	if len(s) < len(DateLayout) {
		return fmt.Errorf("scan date: %q", s)
	}
	p, err := ParseDate(s[:len(DateLayout)])
	*d = p
	return err
}
