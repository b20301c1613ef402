package web

import (
	"strconv"
	"strings"
	"time"

	"github.com/contractflow/contractflow/platform/money"
)

// FormatMoney writes an amount the Vietnamese way: dots between thousands, a
// comma before decimals (only when there are any) and the currency sign:
// "1.250.000.000 ₫". Other currencies keep their code: "1.500,50 USD".
func FormatMoney(a money.Amount, currency string) string {
	v := int64(a)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	whole := strconv.FormatInt(v/100, 10)
	var b strings.Builder
	b.WriteString(sign)
	for i, ch := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(ch)
	}
	if cents := v % 100; cents != 0 {
		b.WriteByte(',')
		b.WriteString(strings.TrimRight(strconv.FormatInt(100+cents, 10)[1:], "0"))
	}
	switch currency {
	case "", "VND":
		b.WriteString(" ₫")
	default:
		b.WriteString(" " + currency)
	}
	return b.String()
}

// FormatDate writes dd/MM/yyyy in loc; the zero time is "".
func FormatDate(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format("02/01/2006")
}

// FormatDateTime writes dd/MM/yyyy HH:mm in loc; the zero time is "".
func FormatDateTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format("02/01/2006 15:04")
}

// timeOf accepts what templates hand over: a time, a pointer to one (nil
// is the zero time) or an RFC 3339 string.
func timeOf(v any) time.Time {
	switch t := v.(type) {
	case time.Time:
		return t
	case *time.Time:
		if t != nil {
			return *t
		}
	case string:
		if p, err := time.Parse(time.RFC3339, t); err == nil {
			return p
		}
		if p, err := time.Parse(time.DateOnly, t); err == nil {
			return p
		}
	case *string:
		if t != nil {
			return timeOf(*t)
		}
	}
	return time.Time{}
}
