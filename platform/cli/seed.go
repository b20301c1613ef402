package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/contractflow/contractflow/platform/kernel"
)

// seedCommand is `contractflow seed [--demo-size N …]`: migrations, every
// enabled module's seed step and, with --demo-size, the bulk demo data set
// each module loads in its own tables (kernel.DemoSeeder).
func seedCommand(ctx context.Context, opts kernel.Options, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(out)
	var sz kernel.DemoSize
	fs.IntVar(&sz.Contracts, "demo-size", 0, "load a bulk demo data set of N contracts (0: none)")
	fs.IntVar(&sz.Evaluations, "demo-evaluations", 0, "purchase evaluations (default N/5)")
	fs.IntVar(&sz.Users, "demo-users", 0, "users over the twelve roles (default N/100, at least 48)")
	fs.IntVar(&sz.Suppliers, "demo-suppliers", 0, "suppliers (default N/50, at least 20)")
	fs.IntVar(&sz.Projects, "demo-projects", 0, "projects (default 3 per 1 000 contracts, at least 5)")
	fs.IntVar(&sz.Departments, "demo-departments", 0, "departments (default 8)")
	fs.Uint64Var(&sz.Seed, "demo-seed", 0, "the data set's seed: the same seed and sizes give the same data (default 2026)")
	fs.StringVar(&sz.Password, "demo-password", "", "every demo user's password (default "+kernel.DefaultDemoPassword+")")
	noEvals := fs.Bool("no-demo-evaluations", false, "load no purchase evaluations")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: seed %s", errUsage, strings.Join(args, " "))
	}
	if fs.NArg() > 0 {
		return errUsage
	}
	if *noEvals {
		sz.Evaluations = -1
	}
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
		if sz.Contracts == 0 {
			return nil
		}
		began := time.Now()
		set, err := k.SeedDemo(ctx, sz)
		if err != nil {
			return err
		}
		s := set.Size
		fmt.Fprintf(out, "demo data set (seed %d): %d contracts, %d evaluations, %d users, %d suppliers, %d projects, %d departments in %s\n",
			s.Seed, s.Contracts, s.Evaluations, s.Users, s.Suppliers, s.Projects, s.Departments, time.Since(began).Round(time.Millisecond))
		return nil
	})
}
