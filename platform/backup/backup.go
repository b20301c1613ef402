// Package backup writes and restores the archive of an on-prem SQLite node:
// a consistent copy of the database taken while the service runs and takes
// writes (SQLite's VACUUM INTO reads one snapshot), the stored files
// (templates, attachments, generated documents) and a manifest with the
// SHA-256 of every entry. Postgres nodes back up with pg_dump and a copy of
// the storage folder instead (README).
//
// Order matters for consistency: the database snapshot is taken first, then
// the files are copied. A file is stored before the row that refers to it
// commits, so every file the snapshot refers to already exists when the
// copy starts; files stored after the snapshot are carried along unused.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // the driver VACUUM INTO runs on
)

// DatabaseName and FilesDir are where the archive (and a restored folder)
// keep the database and the stored files.
const (
	DatabaseName = "contractflow.db"
	FilesDir     = "files"
	ManifestName = "manifest.json"
)

// Manifest lists what an archive holds, with checksums.
type Manifest struct {
	Format    int       `json:"format"`
	CreatedAt time.Time `json:"createdAt"`
	Version   string    `json:"version"`
	Entries   []Entry   `json:"entries"`
}

// Entry is one file of the archive.
type Entry struct {
	Path   string `json:"path"` // slash-separated, relative to the archive root
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Source is what to back up.
type Source struct {
	DatabasePath string // the SQLite file
	StoragePath  string // storage.path
	Version      string // recorded in the manifest
}

// Summary says what a backup or restore did.
type Summary struct {
	DatabaseBytes int64
	Files         int
	FileBytes     int64
}

// Create writes the archive of src to target (a .tar.gz), through a
// temporary file renamed into place, so a failed backup leaves no
// half-written archive under the name.
func Create(ctx context.Context, src Source, target string) (Summary, error) {
	var sum Summary
	dir := filepath.Dir(target)
	work, err := os.MkdirTemp(dir, ".backup-*")
	if err != nil {
		return sum, fmt.Errorf("backup: work folder next to %s: %w", target, err)
	}
	defer os.RemoveAll(work)

	snapshot := filepath.Join(work, DatabaseName)
	if err := vacuumInto(ctx, src.DatabasePath, snapshot); err != nil {
		return sum, err
	}

	tmp, err := os.CreateTemp(dir, ".backup-*.tar.gz")
	if err != nil {
		return sum, fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	gz := gzip.NewWriter(tmp)
	tw := tar.NewWriter(gz)
	m := Manifest{Format: 1, CreatedAt: time.Now().UTC(), Version: src.Version}

	e, err := addFile(tw, snapshot, DatabaseName)
	if err != nil {
		return sum, err
	}
	m.Entries = append(m.Entries, e)
	sum.DatabaseBytes = e.Size

	err = filepath.WalkDir(src.StoragePath, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == src.StoragePath {
				return filepath.SkipDir // no files stored yet
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Uploads in progress are temporary files renamed when whole.
		if d.IsDir() || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".upload-") {
			return nil
		}
		rel, err := filepath.Rel(src.StoragePath, p)
		if err != nil {
			return err
		}
		e, err := addFile(tw, p, path.Join(FilesDir, filepath.ToSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while we walked
		}
		if err != nil {
			return err
		}
		m.Entries = append(m.Entries, e)
		sum.Files++
		sum.FileBytes += e.Size
		return nil
	})
	if err != nil {
		return sum, fmt.Errorf("backup: stored files under %s: %w", src.StoragePath, err)
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return sum, err
	}
	if err := tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(manifest)), ModTime: m.CreatedAt, Typeflag: tar.TypeReg}); err != nil {
		return sum, err
	}
	if _, err := tw.Write(manifest); err != nil {
		return sum, err
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return sum, fmt.Errorf("backup: write %s: %w", target, err)
	}
	if err := tmp.Sync(); err != nil {
		return sum, fmt.Errorf("backup: write %s: %w", target, err)
	}
	if err := tmp.Close(); err != nil {
		return sum, fmt.Errorf("backup: write %s: %w", target, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return sum, fmt.Errorf("backup: %w", err)
	}
	return sum, nil
}

// vacuumInto copies the live database into a new file from one read
// snapshot; writers on the live service carry on (WAL mode).
func vacuumInto(ctx context.Context, dbPath, into string) error {
	if _, err := os.Stat(dbPath); err != nil {
		return fmt.Errorf("backup: database %s: %w", dbPath, err)
	}
	conn, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000")
	if err != nil {
		return fmt.Errorf("backup: open %s: %w", dbPath, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "VACUUM INTO ?", into); err != nil {
		return fmt.Errorf("backup: copy %s: %w", dbPath, err)
	}
	return nil
}

// addFile writes the file at p into the archive as name and returns its entry.
func addFile(tw *tar.Writer, p, name string) (Entry, error) {
	f, err := os.Open(p)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Entry{}, err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size(), ModTime: st.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return Entry{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), f)
	if err != nil {
		return Entry{}, fmt.Errorf("backup: copy %s: %w", p, err)
	}
	if n != st.Size() {
		return Entry{}, fmt.Errorf("backup: %s changed size while being copied", p)
	}
	return Entry{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Restore unpacks the archive at from into the folder to, which must be
// missing or empty: it never overwrites a live data folder. Every entry is
// checked against the manifest; on any mismatch nothing is left behind.
func Restore(from, to string) (m Manifest, sum Summary, err error) {
	if err := checkEmpty(to); err != nil {
		return m, sum, err
	}
	f, err := os.Open(from)
	if err != nil {
		return m, sum, fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	if err := os.MkdirAll(to, 0o750); err != nil {
		return m, sum, fmt.Errorf("restore: %w", err)
	}
	defer func() {
		if err != nil {
			cleanFolder(to)
		}
	}()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return m, sum, fmt.Errorf("restore: %s is not a backup archive: %w", from, err)
	}
	tr := tar.NewReader(gz)
	got := map[string]Entry{}
	var manifest []byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m, sum, fmt.Errorf("restore: read %s: %w", from, err)
		}
		name := path.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return m, sum, fmt.Errorf("restore: %s holds an unexpected entry %q", from, h.Name)
		}
		if name == ManifestName {
			if manifest, err = io.ReadAll(io.LimitReader(tr, 64<<20)); err != nil {
				return m, sum, fmt.Errorf("restore: read manifest: %w", err)
			}
			continue
		}
		e, err := extract(tr, filepath.Join(to, filepath.FromSlash(name)))
		if err != nil {
			return m, sum, err
		}
		e.Path = name
		got[name] = e
	}
	if manifest == nil {
		return m, sum, fmt.Errorf("restore: %s has no %s", from, ManifestName)
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return m, sum, fmt.Errorf("restore: manifest: %w", err)
	}
	for _, want := range m.Entries {
		e, ok := got[want.Path]
		switch {
		case !ok:
			return m, sum, fmt.Errorf("restore: %s is missing from the archive", want.Path)
		case e.SHA256 != want.SHA256 || e.Size != want.Size:
			return m, sum, fmt.Errorf("restore: %s does not match its checksum in the manifest", want.Path)
		}
		delete(got, want.Path)
		if want.Path == DatabaseName {
			sum.DatabaseBytes = e.Size
		} else {
			sum.Files++
			sum.FileBytes += e.Size
		}
	}
	for p := range got {
		return m, sum, fmt.Errorf("restore: %s is in the archive but not in the manifest", p)
	}
	if _, ok := findEntry(m, DatabaseName); !ok {
		return m, sum, fmt.Errorf("restore: the archive holds no database")
	}
	if err := os.MkdirAll(filepath.Join(to, FilesDir), 0o750); err != nil {
		return m, sum, err
	}
	return m, sum, nil
}

func findEntry(m Manifest, p string) (Entry, bool) {
	for _, e := range m.Entries {
		if e.Path == p {
			return e, true
		}
	}
	return Entry{}, false
}

func extract(r io.Reader, dst string) (Entry, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return Entry{}, fmt.Errorf("restore: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Entry{}, fmt.Errorf("restore: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), r)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Entry{}, fmt.Errorf("restore: write %s: %w", dst, err)
	}
	return Entry{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// checkEmpty refuses a folder that holds anything: a live node's data
// folder always does (its database, its -wal file), so it is never
// overwritten.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if len(entries) > 0 {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "-wal") || strings.HasSuffix(e.Name(), "-shm") {
				return fmt.Errorf("restore: %s is in use by a running node (%s); restore into a new, empty folder", dir, e.Name())
			}
		}
		return fmt.Errorf("restore: %s is not empty; restore into a new, empty folder so nothing is overwritten", dir)
	}
	return nil
}

// cleanFolder removes what a failed restore wrote, keeping the folder.
func cleanFolder(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}
