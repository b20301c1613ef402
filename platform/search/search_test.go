package search_test

import (
	"slices"
	"testing"

	"github.com/contractflow/contractflow/platform/search"
)

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"Công ty Thép ĐÔNG Á":   "cong ty thep dong a",
		"HỢP ĐỒNG thầu phụ":     "hop dong thau phu",
		"Nguyễn Thị Lan":        "nguyen thi lan",
		"Cộng hòa (decomposed)": "cong hoa (decomposed)",
		"ABC-123_x%":            "abc-123_x%",
	} {
		if got := search.Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
	if got := search.Words("  Thép   Hòa Phát "); !slices.Equal(got, []string{"thep", "hoa", "phat"}) {
		t.Errorf("Words: %q", got)
	}
	if got := search.Text("NCC01", "", "Công ty A"); got != "ncc01 cong ty a" {
		t.Errorf("Text: %q", got)
	}
}
