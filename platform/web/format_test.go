package web

import (
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/money"
)

func TestFormatMoney(t *testing.T) {
	for _, c := range []struct {
		a        money.Amount
		currency string
		want     string
	}{
		{money.FromUnits(1_250_000_000), "VND", "1.250.000.000 ₫"},
		{money.FromUnits(0), "", "0 ₫"},
		{money.FromUnits(999), "VND", "999 ₫"},
		{money.FromUnits(1000), "VND", "1.000 ₫"},
		{money.Amount(150050), "USD", "1.500,5 USD"},
		{money.Amount(150005), "USD", "1.500,05 USD"},
		{-money.FromUnits(1_500_000), "VND", "-1.500.000 ₫"},
	} {
		if got := FormatMoney(c.a, c.currency); got != c.want {
			t.Errorf("FormatMoney(%d, %q) = %q, want %q", c.a, c.currency, got, c.want)
		}
	}
}

func TestFormatDateInBusinessTimeZone(t *testing.T) {
	loc, err := time.LoadLocation("Asia/Ho_Chi_Minh")
	if err != nil {
		t.Skip("no time zone database")
	}
	// 20:30 UTC on the 31st is already the 1st in Ho Chi Minh City.
	at := time.Date(2026, 12, 31, 20, 30, 0, 0, time.UTC)
	if got := FormatDate(at, loc); got != "01/01/2027" {
		t.Errorf("FormatDate = %q", got)
	}
	if got := FormatDateTime(at, loc); got != "01/01/2027 03:30" {
		t.Errorf("FormatDateTime = %q", got)
	}
	if FormatDate(time.Time{}, loc) != "" {
		t.Error("the zero time should be blank")
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{"/contracts?page=2": "/contracts?page=2", "//evil.example": "/",
		"https://evil.example": "/", "/\\evil": "/", "": "/", "/login?next=/x": "/"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
