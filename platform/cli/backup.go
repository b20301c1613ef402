package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/contractflow/contractflow/platform/backup"
	"github.com/contractflow/contractflow/platform/buildinfo"
	"github.com/contractflow/contractflow/platform/kernel"
)

// backupCommand writes one archive of the SQLite node's database and stored
// files while the service keeps running.
func backupCommand(ctx context.Context, opts kernel.Options, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	to := fs.String("to", "", "archive to write (.tar.gz)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if *to == "" || fs.NArg() > 0 {
		return fmt.Errorf("backup: give the archive to write: contractflow backup --to FILE")
	}
	cfg, err := kernel.LoadConfig(opts)
	if err != nil {
		return err
	}
	if cfg.Database.Driver != "sqlite" {
		return fmt.Errorf("backup: database.driver is %s; back up Postgres with pg_dump and a copy of storage.path (%s), see README", cfg.Database.Driver, cfg.Storage.Path)
	}
	sum, err := backup.Create(ctx, backup.Source{
		DatabasePath: sqlitePath(cfg.Database.DSN), StoragePath: cfg.Storage.Path, Version: buildinfo.Read().Version,
	}, *to)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "backup written to %s: database %d bytes, %d stored files (%d bytes), checksums in %s\n",
		*to, sum.DatabaseBytes, sum.Files, sum.FileBytes, backup.ManifestName)
	return nil
}

// restoreCommand unpacks an archive into a new, empty data folder.
func restoreCommand(opts kernel.Options, args []string, out io.Writer) error {
	_ = opts
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "", "archive written by contractflow backup")
	to := fs.String("to", "", "new, empty data folder")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if *from == "" || *to == "" || fs.NArg() > 0 {
		return fmt.Errorf("restore: give the archive and an empty folder: contractflow restore --from FILE --to DIR")
	}
	_, sum, err := backup.Restore(*from, *to)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(*to)
	fmt.Fprintf(out, "restored into %s: database %d bytes, %d stored files, every checksum matched.\n"+
		"Start a node on it with\n  CONTRACTFLOW_DATABASE_DSN=%s CONTRACTFLOW_STORAGE_PATH=%s contractflow serve\n",
		abs, sum.DatabaseBytes, sum.Files, filepath.Join(abs, backup.DatabaseName), filepath.Join(abs, backup.FilesDir))
	return nil
}

// sqlitePath is the file of a SQLite DSN ("file:x.db?…" or "x.db").
func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}
