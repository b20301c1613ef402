// Package storage keeps files (uploaded attachments, templates, generated
// documents) under generated keys. Blobs is an interface so an object store
// can replace the local folder without touching the modules.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
)

// ErrNotFound reports a key with no file.
var ErrNotFound = errors.New("storage: no such file")

// ErrTooLarge reports a write over its limit; nothing is kept.
var ErrTooLarge = errors.New("storage: file too large")

// Blobs stores files by key.
type Blobs interface {
	// Put writes r under key, at most maxBytes of it; the file appears whole
	// or not at all.
	Put(ctx context.Context, key string, r io.Reader, maxBytes int64) (int64, error)
	// Open reads the file under key.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes the file; a missing one is not an error.
	Delete(ctx context.Context, key string) error
	// Exists reports whether a file is stored under key.
	Exists(ctx context.Context, key string) (bool, error)
}

// Local keeps files in a folder.
type Local struct{ root string }

var _ Blobs = (*Local)(nil)

// NewLocal uses root, creating it when missing.
func NewLocal(root string) (*Local, error) {
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, fmt.Errorf("storage folder %s: %w", root, err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	return &Local{root: abs}, nil
}

var validKey = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*$`)

// path maps a key inside the root; keys are generated, so anything that is
// not a plain relative path is refused rather than cleaned.
func (l *Local) path(key string) (string, error) {
	if !validKey.MatchString(key) || strings.Contains(key, "..") {
		return "", fmt.Errorf("storage: invalid key %q", key)
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// Put writes to a temporary file in the target folder and renames it into
// place, so readers never see a partial file.
func (l *Local) Put(_ context.Context, key string, r io.Reader, maxBytes int64) (int64, error) {
	p, err := l.path(key)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	n, err := io.Copy(tmp, io.LimitReader(r, maxBytes+1))
	if err == nil && n > maxBytes {
		err = ErrTooLarge
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return 0, err
	}
	return n, nil
}

// Open reads the file under key.
func (l *Local) Open(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err
}

// Delete removes the file under key.
func (l *Local) Delete(_ context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Exists reports whether a file is stored under key.
func (l *Local) Exists(_ context.Context, key string) (bool, error) {
	p, err := l.path(key)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// NewKey generates a key under prefix, e.g. "contracts/2026/11/<uuid>.pdf";
// the client's file name never becomes part of a path.
func NewKey(prefix string, now time.Time, ext string) string {
	ext = strings.ToLower(strings.TrimPrefix(ext, "."))
	name := uuid.Must(uuid.NewV7()).String()
	if ext != "" {
		name += "." + ext
	}
	return path.Join(prefix, now.UTC().Format("2006/01"), name)
}

// SanitizeFileName keeps a client's file name safe to store and to echo in
// Content-Disposition: no folders, no control or quoting characters, at most
// 200 characters; an empty result becomes "file".
func SanitizeFileName(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(name)
	var b strings.Builder
	for _, r := range name {
		switch {
		case unicode.IsControl(r), strings.ContainsRune(`"/\:*?<>|;`, r):
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimSpace(b.String())
	out = strings.TrimLeft(out, ".")
	if r := []rune(out); len(r) > 200 {
		out = string(r[len(r)-200:])
	}
	if out == "" {
		return "file"
	}
	return out
}
