package core

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// hasher hashes passwords with argon2id and stores the parameters in each
// hash (PHC string format), so they can be raised later without breaking
// existing hashes. At most cap(slots) hashes run at once: each holds a core
// and memoryKiB of memory for tens of milliseconds, so a burst of logins
// waits its turn instead of starving every other request and growing the
// heap by memoryKiB per login.
type hasher struct {
	memoryKiB   uint32
	iterations  uint32
	parallelism uint8
	slots       chan struct{}
}

const (
	saltLen = 16
	keyLen  = 32
)

// newHasher returns a hasher running at most concurrency hashes at once.
func newHasher(memoryKiB, iterations uint32, parallelism uint8, concurrency int) *hasher {
	return &hasher{memoryKiB: memoryKiB, iterations: iterations, parallelism: parallelism,
		slots: make(chan struct{}, concurrency)}
}

// derive computes one argon2id key once a slot is free.
func (h *hasher) derive(ctx context.Context, password, salt []byte, t, m uint32, p uint8, n uint32) ([]byte, error) {
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.slots }()
	return argon2.IDKey(password, salt, t, m, p, n), nil
}

func (h *hasher) hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("salt: %w", err)
	}
	key, err := h.derive(ctx, []byte(password), salt, h.iterations, h.memoryKiB, h.parallelism, keyLen)
	if err != nil {
		return "", err
	}
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, h.memoryKiB, h.iterations, h.parallelism, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var errBadHash = errors.New("malformed password hash")

// verify reports whether password matches encoded, using the parameters
// stored in encoded.
func (h *hasher) verify(ctx context.Context, password, encoded string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, errBadHash
	}
	got, err := h.derive(ctx, []byte(password), salt, t, m, p, uint32(len(want)))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// burn spends the time of one verification against a hash of the current
// parameters, for logins of unknown emails: it derives the same key length
// from the password and a fresh salt, which is that verification's work
// without a stored dummy hash (so none is computed at start-up).
func (h *hasher) burn(ctx context.Context, password string) error {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return fmt.Errorf("salt: %w", err)
	}
	_, err := h.derive(ctx, []byte(password), salt, h.iterations, h.memoryKiB, h.parallelism, keyLen)
	return err
}
