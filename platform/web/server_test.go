package web

import (
	"strings"
	"testing"
)

// Message keys are shared by every module: a second module giving a key
// another text is a start-up error naming it, so no module rewords the
// pages of another depending on the order they load in.
func TestMessagesClash(t *testing.T) {
	s := New(Options{})
	var a, b, same Pages
	a.Messages("en", map[string]string{"phase.X": "Collecting comments"})
	same.Messages("en", map[string]string{"phase.X": "Collecting comments"})
	b.Messages("en", map[string]string{"phase.X": "Collecting opinions"})
	if err := s.Add("contracts", &a); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("procurement", &same); err != nil {
		t.Fatalf("the same text twice: %v", err)
	}
	err := s.Add("reports", &b)
	if err == nil || !strings.Contains(err.Error(), "reports") || !strings.Contains(err.Error(), "phase.X") {
		t.Fatalf("clash: %v", err)
	}
}
