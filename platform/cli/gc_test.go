package cli

import (
	"runtime/debug"
	"testing"
)

// serve runs the collector at serveGCPercent unless GOGC is set.
func TestServeGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	serveGC()
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Errorf("GOGC unset: the collector runs at %d, want %d", got, serveGCPercent)
	}
	t.Setenv("GOGC", "50")
	serveGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: serve changed the collector's pace to %d", got)
	}
}
