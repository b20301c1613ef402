package core

import (
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
// existing hashes.
type hasher struct {
	memoryKiB   uint32
	iterations  uint32
	parallelism uint8
	dummy       string // verified for unknown emails so they take as long as known ones
}

const (
	saltLen = 16
	keyLen  = 32
)

func newHasher(memoryKiB, iterations uint32, parallelism uint8) (*hasher, error) {
	h := &hasher{memoryKiB: memoryKiB, iterations: iterations, parallelism: parallelism}
	dummy, err := h.hash("not-a-real-password-" + rand.Text())
	if err != nil {
		return nil, err
	}
	h.dummy = dummy
	return h, nil
}

func (h *hasher) hash(password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, h.iterations, h.memoryKiB, h.parallelism, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, h.memoryKiB, h.iterations, h.parallelism, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var errBadHash = errors.New("malformed password hash")

// verify reports whether password matches encoded, using the parameters
// stored in encoded.
func (h *hasher) verify(password, encoded string) (bool, error) {
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
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// burn spends the time of one verification, for logins of unknown emails.
func (h *hasher) burn(password string) { _, _ = h.verify(password, h.dummy) }
