// Package money holds amounts exactly. An Amount counts hundredths of the
// currency unit in an int64: sums and comparisons are integer arithmetic on
// both databases (SQLite has no exact decimal type), and JSON carries it as
// a plain number with at most two decimals.
package money

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// Amount is a sum of money in hundredths of its currency unit.
type Amount int64

// Max is the largest accepted amount: 10^15 units, far above any contract.
const Max Amount = 100_000_000_000_000_000

// ErrInvalid reports a value that is not an exact amount.
var ErrInvalid = errors.New("must be a number with at most two decimals")

// FromUnits returns whole units (e.g. 1500000 VND).
func FromUnits(units int64) Amount { return Amount(units * 100) }

// Parse reads a decimal like "1500000", "-3.5" or "12.05" exactly.
func Parse(s string) (Amount, error) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || (hasFrac && (frac == "" || len(frac) > 2)) || strings.ContainsAny(s, "eE+") {
		return 0, ErrInvalid
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || Amount(n) > Max {
		return 0, ErrInvalid
	}
	if neg {
		n = -n
	}
	return Amount(n), nil
}

// String formats the amount with two decimals trimmed of zeros: "1500000", "12.5".
func (a Amount) String() string { return string(a.append(make([]byte, 0, 24))) }

// append writes a's decimal form to b without fmt: every amount of a list,
// an inbox or the dashboard goes through it (fmt.Sprintf was 4 % of the
// dashboard's CPU).
func (a Amount) append(b []byte) []byte {
	u := uint64(a)
	if a < 0 {
		b, u = append(b, '-'), -u // -u in uint64 is exact even for the smallest int64
	}
	b = strconv.AppendUint(b, u/100, 10)
	if cents := u % 100; cents != 0 {
		b = append(b, '.', byte('0'+cents/10))
		if cents%10 != 0 {
			b = append(b, byte('0'+cents%10))
		}
	}
	return b
}

// Float is for display and spreadsheets only, never for arithmetic.
func (a Amount) Float() float64 { return float64(a) / 100 }

// MarshalJSON writes a JSON number.
func (a Amount) MarshalJSON() ([]byte, error) { return a.append(make([]byte, 0, 24)), nil }

// UnmarshalJSON accepts a JSON number (not a string) with at most two
// decimals. Its error is a json.UnmarshalTypeError so the decoder names the
// field it belongs to.
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	v, err := Parse(string(b))
	if len(b) == 0 || b[0] == '"' || err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[Amount]()}
	}
	*a = v
	return nil
}

// JSONDescription tells a client what the field expects.
func (Amount) JSONDescription() string { return "a number with at most two decimals" }
