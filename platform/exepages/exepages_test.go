package exepages_test

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/exepages"
)

// TestReleaseDropsTheExecutablesPages checks, on Linux, that after Release
// this test binary's read-only mappings keep only the pages touched since:
// a fraction of what start-up left mapped.
func TestReleaseDropsTheExecutablesPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Release does nothing elsewhere")
	}
	before := residentCode(t)
	if err := exepages.Release(); err != nil {
		t.Fatal(err)
	}
	after := residentCode(t)
	t.Logf("resident code and constants of the test binary: %d KiB before Release, %d KiB after", before, after)
	if after > before/2 {
		t.Errorf("Release left %d of %d KiB resident", after, before)
	}
}

// residentCode sums the Rss of the executable's read-only mappings.
func residentCode(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, ours := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-"): // a mapping's header
			ours = len(fields) >= 6 && fields[5] == exe && !strings.Contains(fields[1], "w")
		case ours && fields[0] == "Rss:":
			kb, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatal(err)
			}
			total += kb
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if total == 0 {
		t.Fatal("no resident mapping of the executable found")
	}
	return total
}
