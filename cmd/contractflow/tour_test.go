package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

// TestREADMETour runs docs/tour.sh, the tour the README shows, against a
// fresh node, on every CI run (.ci/run installs curl, jq and unzip).
func TestREADMETour(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "unzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("docs/tour.sh needs %s: %v", tool, err)
		}
	}
	srv := serve(t, testkit.Isolated(t, "sqlite"))
	script, err := filepath.Abs("../../docs/tour.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "API="+srv.URL, "TOUR_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/tour.sh failed: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("%s", out)
	}
	for _, want := range []string{"no placeholder left", "byte for byte", `"phase":"DaPhatHanh"`, "totalContracts", "tour finished"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tour output lacks %q:\n%s", want, out)
		}
	}
}
