package core

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/contractflow/contractflow/platform/lowprio"
)

// hasher hashes passwords with argon2id and stores the parameters in each
// hash (PHC string format), so they can be raised later without breaking
// existing hashes. At most cap(slots) hashes run at once: each holds a core
// and memoryKiB of memory for tens of milliseconds, so a burst of logins
// waits its turn instead of taking every core and memoryKiB per login.
//
// With isolation "process" the keys are derived in a child process at the
// lowest CPU priority (keyWorker), so a running hash yields its core to
// any request thread at once instead of holding a P until Go's 10 ms
// preemption (docs/decisions.md, "Logins beside other requests").
type hasher struct {
	memoryKiB   uint32
	iterations  uint32
	parallelism uint8
	slots       chan struct{}
	inline      bool         // identity.hashIsolation: inline
	log         *slog.Logger // where a child that cannot start is reported
}

const (
	saltLen = 16
	keyLen  = 32
)

// Isolation values of identity.hashIsolation.
const (
	isolationProcess = "process"
	isolationInline  = "inline"
)

// keyWorker derives keys in the low-priority child process. A package-level
// variable, so that the child (this executable, test binaries included)
// serves it before main runs.
var keyWorker = lowprio.Register("identity-argon2id", deriveKey)

// newHasher returns a hasher running at most concurrency hashes at once, in
// a child process unless isolation is isolationInline.
func newHasher(memoryKiB, iterations uint32, parallelism uint8, concurrency int, isolation string, log *slog.Logger) *hasher {
	return &hasher{memoryKiB: memoryKiB, iterations: iterations, parallelism: parallelism,
		slots: make(chan struct{}, concurrency), inline: isolation == isolationInline,
		log: log.With("hint", "set identity.hashIsolation: inline where the host forbids starting processes")}
}

// derive computes one argon2id key once a slot is free.
func (h *hasher) derive(ctx context.Context, password, salt []byte, t, m uint32, p uint8, n uint32) ([]byte, error) {
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.slots }()
	req := keyRequest(password, salt, t, m, p, n)
	if h.inline {
		return deriveKey(req)
	}
	// The slot is held until the child answers, even for a caller that
	// gave up, as an inline derivation cannot be cancelled either: the cap
	// counts the hashes running.
	return keyWorker.Call(context.WithoutCancel(ctx), h.log, req)
}

// release ends the child process once no hash is running in it, for a
// one-off hash that no login is likely to follow soon (the start-up check
// of the administrator's password): the idle service then holds no child.
func (h *hasher) release() {
	if !h.inline {
		keyWorker.Release()
	}
}

// keyRequest encodes what deriving a key needs, and nothing else: t, m, p,
// n, the salt's length, the salt, then the password.
func keyRequest(password, salt []byte, t, m uint32, p uint8, n uint32) []byte {
	b := make([]byte, 0, keyRequestHeader+len(salt)+len(password))
	b = binary.BigEndian.AppendUint32(b, t)
	b = binary.BigEndian.AppendUint32(b, m)
	b = append(b, p)
	b = binary.BigEndian.AppendUint32(b, n)
	b = binary.BigEndian.AppendUint32(b, uint32(len(salt)))
	b = append(b, salt...)
	return append(b, password...)
}

const keyRequestHeader = 17

// deriveKey is the one place argon2.IDKey runs: in the child, or in the
// service with isolation inline.
func deriveKey(req []byte) ([]byte, error) {
	if len(req) < keyRequestHeader {
		return nil, errors.New("malformed key request")
	}
	t, m, p, n := binary.BigEndian.Uint32(req), binary.BigEndian.Uint32(req[4:]), req[8], binary.BigEndian.Uint32(req[9:])
	nSalt, rest := binary.BigEndian.Uint32(req[13:]), req[keyRequestHeader:]
	if uint64(nSalt) > uint64(len(rest)) {
		return nil, errors.New("malformed key request")
	}
	return argon2.IDKey(rest[nSalt:], rest[:nSalt], t, m, p, n), nil
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
