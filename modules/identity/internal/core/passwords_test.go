package core

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// At most the configured number of hashes run at once; another waits for a
// slot, or gives up with its context. Hashes agree between the isolations:
// one verifies what the other hashed.
func TestHasherCapsConcurrentHashes(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	// other[i] hashes with the isolation that is not i.
	other := map[string]*hasher{
		isolationProcess: newHasher(64, 1, 1, 2, isolationInline, quiet),
		isolationInline:  newHasher(64, 1, 1, 2, isolationProcess, quiet),
	}
	for _, isolation := range []string{isolationProcess, isolationInline} {
		t.Run(isolation, func(t *testing.T) {
			h := newHasher(64, 1, 1, 2, isolation, quiet)
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
			for _, v := range []*hasher{h, other[isolation]} {
				for pw, want := range map[string]bool{"a-password": true, "another": false} {
					if ok, err := v.verify(context.Background(), pw, enc); err != nil || ok != want {
						t.Errorf("verify(%q) = %v, %v; want %v", pw, ok, err, want)
					}
				}
			}
			if err := h.burn(context.Background(), "whatever"); err != nil {
				t.Errorf("burn: %v", err)
			}
		})
	}
}

// A key request that does not hold its salt is refused, not read past.
func TestDeriveKeyRefusesMalformedRequests(t *testing.T) {
	req := keyRequest([]byte("pw"), make([]byte, 16), 1, 64, 1, 32)
	for _, bad := range [][]byte{nil, req[:keyRequestHeader-1], req[:keyRequestHeader+15]} {
		if _, err := deriveKey(bad); err == nil {
			t.Errorf("deriveKey of %d bytes: no error", len(bad))
		}
	}
	if key, err := deriveKey(req); err != nil || len(key) != 32 {
		t.Errorf("deriveKey = %x, %v", key, err)
	}
}
