// Package cli is the contractflow command line: serve (the default),
// migrate up|status, seed, version, and the operator commands modules add.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/contractflow/contractflow/platform/buildinfo"
	"github.com/contractflow/contractflow/platform/kernel"
)

const usage = `Usage: contractflow [--config DIR] <command>

Commands:
  serve              start the HTTP service (default)
  migrate up         apply pending database migrations
  migrate status     list migrations and when they were applied
  seed               apply migrations and run every enabled module's seed step
  version            print the version
%s
Configuration: DIR/config.yaml, DIR/config.<app.env>.yaml, then CONTRACTFLOW_* variables.
`

var errUsage = errors.New("unknown command")

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("contractflow", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configDir := fs.String("config", envOr("CONTRACTFLOW_CONFIG_DIR", "config"), "configuration folder")
	fs.Usage = func() { fmt.Fprintf(stderr, usage, moduleUsage()) }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 {
		rest = []string{"serve"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := Run(ctx, kernel.Options{ConfigDir: *configDir, Version: buildinfo.Version}, rest, stdout)
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "contractflow: unknown command %q\n", strings.Join(rest, " "))
		fs.Usage()
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "contractflow:", err)
		return 1
	}
	return 0
}

// Run executes one command with the given kernel options.
func Run(ctx context.Context, opts kernel.Options, args []string, out io.Writer) error {
	switch strings.Join(args, " ") {
	case "version":
		fmt.Fprintf(out, "contractflow %s (%s)\n", buildinfo.Version, buildinfo.Commit())
		return nil
	case "serve":
		k, err := kernel.New(opts)
		if err != nil {
			return err
		}
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
	case "seed":
		return withKernel(opts, func(k *kernel.Kernel) error {
			if _, err := k.Migrate(ctx); err != nil {
				return err
			}
			if err := k.Provision(ctx); err != nil {
				return err
			}
			if err := k.Seed(ctx); err != nil {
				return err
			}
			fmt.Fprintln(out, "seeded modules:", strings.Join(k.Enabled(), ", "))
			return nil
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

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
