package money

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// sprintf is the formatting String had before it dropped fmt: two decimals,
// trailing zeros and a bare point trimmed.
func sprintf(a Amount) string {
	sign, v := "", int64(a)
	if v < 0 {
		sign, v = "-", -v
	}
	s := fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		a    Amount
		want string
	}{
		{0, "0"}, {5, "0.05"}, {50, "0.5"}, {100, "1"}, {1050, "10.5"}, {1005, "10.05"}, {100000000, "1000000"},
		{-5, "-0.05"}, {-100050, "-1000.5"}, {Max, "1000000000000000"},
		{math.MaxInt64, "92233720368547758.07"}, {math.MinInt64, "-92233720368547758.08"},
	} {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("Amount(%d).String() = %q, want %q", int64(tc.a), got, tc.want)
		}
		b, err := json.Marshal(tc.a)
		if err != nil || string(b) != tc.want {
			t.Errorf("json.Marshal(Amount(%d)) = %s, %v; want %s", int64(tc.a), b, err, tc.want)
		}
	}
	// Every amount from -1 000.00 to 1 000.00 formats as before, and
	// parses back to itself.
	for a := Amount(-100_000); a <= 100_000; a++ {
		if got, old := a.String(), sprintf(a); got != old {
			t.Fatalf("Amount(%d).String() = %q, was %q", int64(a), got, old)
		}
		if back, err := Parse(a.String()); err != nil || back != a {
			t.Fatalf("Parse(%q) = %d, %v", a.String(), int64(back), err)
		}
	}
}
