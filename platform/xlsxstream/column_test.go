package xlsxstream

import "testing"

// Column letters are computed per cell: every column against the
// bijective base-26 definition, and spot checks at each width.
func TestAppendColumn(t *testing.T) {
	for i := range maxColumns {
		want := ""
		for n := i + 1; n > 0; n = (n - 1) / 26 {
			want = string(rune('A'+(n-1)%26)) + want
		}
		if got := string(appendColumn([]byte("x"), i)); got != "x"+want {
			t.Fatalf("column %d = %q, want %q", i, got[1:], want)
		}
	}
	for i, want := range map[int]string{0: "A", 25: "Z", 26: "AA", 701: "ZZ", 702: "AAA", maxColumns - 1: "XFD"} {
		if got := string(appendColumn(nil, i)); got != want {
			t.Errorf("column %d = %q, want %q", i, got, want)
		}
	}
}
