// Package cli is the contractflow command line: serve (the default),
// migrate up|status, seed, version, and the operator commands modules add.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/contractflow/contractflow/platform/buildinfo"
	"github.com/contractflow/contractflow/platform/exepages"
	"github.com/contractflow/contractflow/platform/kernel"
)

const usage = `Usage: contractflow <command> [--config DIR] [flags]

Commands:
  serve              start the HTTP service (default)
  migrate up         apply pending database migrations
  migrate status     list migrations and when they were applied
  seed [--demo-size N]
                     apply migrations and run every enabled module's seed step; with
                     --demo-size, load a bulk demo data set of N contracts (and derived
                     users, master data, evaluations, budgets); see seed --help
  config             print the effective configuration, each value's source, secrets masked
  backup --to FILE   write one archive of the SQLite database and the stored files, with
                     a checksum manifest, while the service runs
  restore --from FILE --to DIR
                     unpack a backup into a new, empty data folder (never a live one)
  health [--url URL] probe /health/ready of the configured http.address; exit 1 when not ready
  version            print the version, commit and build time
  help               print this help (also -h, --help)
%s
Flags may come before or after the command:
  --config DIR       configuration folder (default ./config, or CONTRACTFLOW_CONFIG_DIR);
                     a folder given explicitly must exist

Configuration: embedded defaults, DIR/config.yaml, DIR/config.<app.env>.yaml, then
CONTRACTFLOW_* variables (CONTRACTFLOW_HTTP_ADDRESS=:9000 sets http.address).
`

var errUsage = errors.New("unknown command")

// globalArgs are the parts of the command line every command shares.
type globalArgs struct {
	configDir string
	explicit  bool // --config or CONTRACTFLOW_CONFIG_DIR named the folder
	help      bool
	rest      []string
}

// parseGlobal takes --config DIR and the help flags from anywhere on the
// command line, so `contractflow serve --config DIR` works as well as
// `contractflow --config DIR serve`; everything else is left for the
// command. A flag before the command that is not global is an error.
func parseGlobal(args []string) (globalArgs, error) {
	g := globalArgs{configDir: "config"}
	if v := os.Getenv("CONTRACTFLOW_CONFIG_DIR"); v != "" {
		g.configDir, g.explicit = v, true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			g.rest = append(g.rest, args[i+1:]...)
			break
		}
		switch {
		case a == "-h" || a == "--help" || a == "-help" || (a == "help" && len(g.rest) == 0):
			g.help = true
		case a == "--config" || a == "-config":
			if i+1 >= len(args) {
				return g, fmt.Errorf("flag %s needs a folder", a)
			}
			g.configDir, g.explicit = args[i+1], true
			i++
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-config="):
			g.configDir, g.explicit = a[strings.IndexByte(a, '=')+1:], true
		case strings.HasPrefix(a, "-") && len(g.rest) == 0:
			return g, fmt.Errorf("flag provided but not defined: %s", a)
		default:
			g.rest = append(g.rest, a)
		}
	}
	return g, nil
}

// Main runs the command line and returns the process exit code: 0 on
// success (help included), 1 when the command fails, 2 for a command line
// it does not understand.
func Main(args []string, stdout, stderr io.Writer) int {
	printUsage := func(w io.Writer) { fmt.Fprintf(w, usage, moduleUsage()) }
	g, err := parseGlobal(args)
	if err != nil {
		fmt.Fprintln(stderr, "contractflow:", err)
		printUsage(stderr)
		return 2
	}
	if g.help {
		printUsage(stdout)
		return 0
	}
	if g.explicit {
		if st, err := os.Stat(g.configDir); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "contractflow: --config %s: the configuration folder does not exist (give an existing folder, or leave --config out to use the built-in defaults)\n", g.configDir)
			return 1
		}
	}
	rest := g.rest
	if len(rest) == 0 {
		rest = []string{"serve"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = Run(ctx, kernel.Options{ConfigDir: g.configDir, Version: buildinfo.Read().Version}, rest, stdout)
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "contractflow: unknown command %q\n", strings.Join(rest, " "))
		printUsage(stderr)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "contractflow:", err)
		return 1
	}
	return 0
}

// Run executes one command with the given kernel options.
func Run(ctx context.Context, opts kernel.Options, args []string, out io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "health":
			return health(ctx, opts, args[1:], out)
		case "backup":
			return backupCommand(ctx, opts, args[1:], out)
		case "restore":
			return restoreCommand(opts, args[1:], out)
		case "seed":
			return seedCommand(ctx, opts, args[1:], out)
		}
	}
	switch strings.Join(args, " ") {
	case "version":
		fmt.Fprintln(out, buildinfo.Read())
		return nil
	case "config":
		cfg, err := kernel.LoadConfig(opts)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
		for _, s := range cfg.Settings() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, s.Value, s.Source)
		}
		return tw.Flush()
	case "serve":
		serveGC()
		k, err := kernel.New(opts)
		if err != nil {
			return err
		}
		go releaseStartup(k)
		return k.Serve(ctx)
	case "migrate", "migrate up":
		return withKernel(opts, func(k *kernel.Kernel) error {
			applied, err := k.Migrate(ctx)
			if err != nil {
				return err
			}
			for _, s := range applied {
				fmt.Fprintf(out, "applied %s %04d %s\n", s.Module, s.Version, s.Name)
			}
			fmt.Fprintf(out, "%d migration(s) applied\n", len(applied))
			return nil
		})
	case "migrate status":
		return withKernel(opts, func(k *kernel.Kernel) error {
			list, err := k.MigrationStatus(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MODULE\tVERSION\tNAME\tAPPLIED")
			for _, s := range list {
				at := "pending"
				if s.AppliedAt != nil {
					at = s.AppliedAt.Format("2006-01-02 15:04:05Z07:00")
				}
				fmt.Fprintf(tw, "%s\t%04d\t%s\t%s\n", s.Module, s.Version, s.Name, at)
			}
			return tw.Flush()
		})
	}
	return runModuleCommand(ctx, opts, args, out)
}

// runModuleCommand runs the module command whose name prefixes args, e.g.
// "user reset-password --email x".
func runModuleCommand(ctx context.Context, opts kernel.Options, args []string, out io.Writer) error {
	return withKernel(opts, func(k *kernel.Kernel) error {
		for _, c := range k.Commands() {
			words := strings.Fields(c.Name)
			if len(args) < len(words) || strings.Join(args[:len(words)], " ") != c.Name {
				continue
			}
			if _, err := k.Migrate(ctx); err != nil {
				return err
			}
			if err := k.Provision(ctx); err != nil {
				return err
			}
			return c.Run(ctx, k.App(), args[len(words):], out)
		}
		return errUsage
	})
}

func withKernel(opts kernel.Options, fn func(*kernel.Kernel) error) error {
	k, err := kernel.New(opts)
	if err != nil {
		return err
	}
	return errors.Join(fn(k), k.Close(context.Background()))
}

func moduleUsage() string {
	var b strings.Builder
	for _, f := range kernel.Registered() {
		if cp, ok := f().(kernel.CommandProvider); ok {
			for _, c := range cp.Commands() {
				fmt.Fprintf(&b, "  %-18s %s\n", c.Name, c.Usage)
			}
		}
	}
	return b.String()
}

// serveGCPercent is the service's GOGC when the environment sets none. Its
// live heap is a few MiB while requests allocate fast, so at Go's default
// of 100 the collector ran every few MiB of garbage; at 200 it runs half as
// often for some 6–10 MiB more heap under load (docs/decisions.md, "The
// collector's pace"). The hashing child, whose heap is the 19 MiB of each
// hash, keeps Go's default.
const serveGCPercent = 200

// startupSettles is how long after the listener starts the start-up's
// background work (the default-password check, the caches' first loads)
// is over on a quiet machine.
const startupSettles = time.Second

// releaseStartup hands the executable's pages back to the system once the
// service has started (platform/exepages): start-up ran code from all over
// the binary, and the kernel keeps what it mapped in 2 MiB folios.
func releaseStartup(k *kernel.Kernel) {
	<-k.Listening()
	time.Sleep(startupSettles)
	if err := exepages.Release(); err != nil {
		k.App().Log.Info("the executable's start-up pages stay resident", "err", err)
	}
}

func serveGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
}
