package core

import (
	"context"
	"strings"
	"testing"
	"time"
)

// At most the configured number of hashes run at once; another waits for a
// slot, or gives up with its context.
func TestHasherCapsConcurrentHashes(t *testing.T) {
	h := newHasher(64, 1, 1, 2)
	// Two hashes hold both slots: a third waits until its context ends.
	h.slots <- struct{}{}
	h.slots <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := h.hash(ctx, "a-password"); err == nil {
		t.Fatal("hash with every slot taken returned before its context ended")
	}
	<-h.slots
	<-h.slots
	enc, err := h.hash(context.Background(), "a-password")
	if err != nil || !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash = %q, %v", enc, err)
	}
	for pw, want := range map[string]bool{"a-password": true, "another": false} {
		if ok, err := h.verify(context.Background(), pw, enc); err != nil || ok != want {
			t.Errorf("verify(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	if err := h.burn(context.Background(), "whatever"); err != nil {
		t.Errorf("burn: %v", err)
	}
}
