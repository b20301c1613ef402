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

func TestTrigrams(t *testing.T) {
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"mo", nil},
		{"mong", []string{"mon", "ong"}},
		{"ongong", []string{"ong", "ngo", "gon"}},
		{"đào", []string{"đào"}},
	} {
		t.Run(tc.word, func(t *testing.T) {
			if got := search.Trigrams(tc.word); !slices.Equal(got, tc.want) {
				t.Errorf("Trigrams(%q) = %q, want %q", tc.word, got, tc.want)
			}
		})
	}
}
