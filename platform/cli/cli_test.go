package cli_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/cli"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/ratelimit"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/platform/web"
)

// gadgets is a test module with one migration, an idempotent seed step and
// an operator command.
type gadgets struct {
	probe *probe
}

// probe collects what the module saw across the kernels the CLI builds.
type probe struct {
	mu       sync.Mutex
	seedRuns int
	cmdArgs  [][]string
}

var (
	_ kernel.Migrator        = (*gadgets)(nil)
	_ kernel.Seeder          = (*gadgets)(nil)
	_ kernel.CommandProvider = (*gadgets)(nil)
)

func (*gadgets) Info() kernel.Info { return kernel.Info{Name: "gadgets"} }

func (*gadgets) Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "create gadgets", Up: migrate.SQL(
		`CREATE TABLE gadgets (id VARCHAR(36) PRIMARY KEY, name VARCHAR(50) NOT NULL UNIQUE)`,
	)}}
}

func (g *gadgets) Seed(ctx context.Context, app *kernel.App) error {
	g.probe.mu.Lock()
	g.probe.seedRuns++
	g.probe.mu.Unlock()
	return app.DB.InTx(ctx, func(ctx context.Context) error {
		var n int64
		tx := app.DB.Conn(ctx)
		if err := tx.Table("gadgets").Where("name = ?", "seeded").Count(&n).Error; err != nil || n > 0 {
			return err
		}
		return tx.Exec("INSERT INTO gadgets (id, name) VALUES (?, ?)", uuid.NewString(), "seeded").Error
	})
}

func (g *gadgets) Commands() []kernel.Command {
	return []kernel.Command{
		{Name: "gadget add", Usage: "add a gadget (--name NAME)", Run: func(ctx context.Context, app *kernel.App, args []string, out io.Writer) error {
			g.probe.mu.Lock()
			g.probe.cmdArgs = append(g.probe.cmdArgs, args)
			g.probe.mu.Unlock()
			fs := flag.NewFlagSet("gadget add", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			name := fs.String("name", "", "")
			if err := fs.Parse(args); err != nil {
				return err
			}
			if *name == "" {
				return errors.New("gadget add: --name is required")
			}
			if err := app.DB.Conn(ctx).Exec("INSERT INTO gadgets (id, name) VALUES (?, ?)", uuid.NewString(), *name).Error; err != nil {
				return err
			}
			_, err := fmt.Fprintf(out, "added gadget %s\n", *name)
			return err
		}},
	}
}

type env struct {
	set   map[string]any
	probe *probe
}

func newEnv(t *testing.T, driver string) *env {
	set := testkit.Isolated(t, driver)
	set["storage.path"] = t.TempDir()
	return &env{set: set, probe: &probe{}}
}

func (e *env) opts(extra map[string]any) kernel.Options {
	set := map[string]any{}
	for k, v := range e.set {
		set[k] = v
	}
	for k, v := range extra {
		set[k] = v
	}
	return kernel.Options{
		Modules:   []kernel.Factory{func() kernel.Module { return &gadgets{probe: e.probe} }},
		Set:       set,
		Environ:   []string{},
		LogOutput: io.Discard,
	}
}

func (e *env) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := cli.Run(context.Background(), e.opts(nil), args, &out)
	return out.String(), err
}

// gadgetNames reads the table straight from the database the CLI used.
func (e *env) gadgetNames(t *testing.T) []string {
	t.Helper()
	d, err := db.Open(db.Config{Driver: e.set["database.driver"].(string), DSN: e.set["database.dsn"].(string), MaxOpenConns: 1})
	require.NoError(t, err)
	defer d.Close()
	var names []string
	require.NoError(t, d.Conn(context.Background()).Table("gadgets").Order("name").Pluck("name", &names).Error)
	return names
}

// statusLine finds the gadgets row of `migrate status` and returns its
// last column(s): "pending" or the applied time.
func statusOf(t *testing.T, out, module string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NotEmpty(t, lines)
	assert.Equal(t, []string{"MODULE", "VERSION", "NAME", "APPLIED"}, strings.Fields(lines[0]))
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == module {
			require.GreaterOrEqual(t, len(f), 4, "line %q", l)
			if f[len(f)-1] == "pending" {
				return "pending"
			}
			return f[len(f)-2] + " " + f[len(f)-1]
		}
	}
	t.Fatalf("no %s line in:\n%s", module, out)
	return ""
}

func TestVersion(t *testing.T) {
	e := newEnv(t, "sqlite")
	out, err := e.run(t, "version")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "contractflow "), "got %q", out)
	assert.Equal(t, 1, strings.Count(out, "\n"), "one line")
}

func TestMigrateAndSeed(t *testing.T) {
	platform := len(ratelimit.Migrations()) + len(web.Migrations()) // the platform's own and the pages' preferences
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		e := newEnv(t, driver)
		steps := []struct {
			name  string
			args  []string
			check func(t *testing.T, out string)
		}{
			{name: "status before migrating", args: []string{"migrate", "status"}, check: func(t *testing.T, out string) {
				assert.Equal(t, "pending", statusOf(t, out, "gadgets"))
				assert.Equal(t, "pending", statusOf(t, out, kernel.PlatformModule))
				assert.Contains(t, out, "0001")
				assert.Contains(t, out, "create gadgets")
			}},
			{name: "migrate up applies the module's and the platform's", args: []string{"migrate", "up"}, check: func(t *testing.T, out string) {
				assert.Contains(t, out, "applied gadgets 0001 create gadgets\n")
				assert.Contains(t, out, fmt.Sprintf("\n%d migration(s) applied\n", 1+platform))
			}},
			{name: "migrate up again applies nothing", args: []string{"migrate", "up"}, check: func(t *testing.T, out string) {
				assert.Equal(t, "0 migration(s) applied\n", out)
			}},
			{name: "bare migrate means up", args: []string{"migrate"}, check: func(t *testing.T, out string) {
				assert.Equal(t, "0 migration(s) applied\n", out)
			}},
			{name: "status after migrating shows the applied time", args: []string{"migrate", "status"}, check: func(t *testing.T, out string) {
				at, err := time.Parse("2006-01-02 15:04:05Z07:00", statusOf(t, out, "gadgets"))
				require.NoError(t, err)
				assert.WithinDuration(t, time.Now(), at, time.Minute)
				assert.NotEqual(t, "pending", statusOf(t, out, kernel.PlatformModule))
			}},
			{name: "seed", args: []string{"seed"}, check: func(t *testing.T, out string) {
				assert.Equal(t, "seeded modules: gadgets\n", out)
				assert.Equal(t, []string{"seeded"}, e.gadgetNames(t))
			}},
			{name: "seed again changes nothing", args: []string{"seed"}, check: func(t *testing.T, out string) {
				assert.Equal(t, "seeded modules: gadgets\n", out)
				assert.Equal(t, []string{"seeded"}, e.gadgetNames(t))
				assert.Equal(t, 2, e.probe.seedRuns, "the seed step ran both times")
			}},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				out, err := e.run(t, st.args...)
				require.NoError(t, err)
				st.check(t, out)
			})
		}
	})
}

func TestSeedOnFreshDatabaseMigratesFirst(t *testing.T) {
	e := newEnv(t, "sqlite")
	out, err := e.run(t, "seed")
	require.NoError(t, err)
	assert.Equal(t, "seeded modules: gadgets\n", out)
	assert.Equal(t, []string{"seeded"}, e.gadgetNames(t))
}

func TestModuleCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		extra    map[string]any
		wantErr  string
		wantOut  string
		wantArgs [][]string
		wantRows []string
	}{
		{name: "runs with its args", args: []string{"gadget", "add", "--name", "lamp"}, wantOut: "added gadget lamp\n",
			wantArgs: [][]string{{"--name", "lamp"}}, wantRows: []string{"lamp"}},
		{name: "its error is returned", args: []string{"gadget", "add"},
			wantErr: "--name is required", wantArgs: [][]string{{}}, wantRows: []string{}},
		{name: "prefix of a command name is unknown", args: []string{"gadget"}, wantErr: "unknown command"},
		{name: "disabled module has no commands", args: []string{"gadget", "add", "--name", "x"},
			extra: map[string]any{"modules.gadgets.enabled": false}, wantErr: "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "sqlite")
			var out bytes.Buffer
			err := cli.Run(context.Background(), e.opts(tc.extra), tc.args, &out)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantOut, out.String())
			wantArgs := tc.wantArgs
			for i := range e.probe.cmdArgs {
				if e.probe.cmdArgs[i] == nil {
					e.probe.cmdArgs[i] = []string{}
				}
			}
			assert.Equal(t, wantArgs, e.probe.cmdArgs)
			if tc.wantRows != nil {
				assert.Equal(t, tc.wantRows, nonNil(e.gadgetNames(t)), "the command ran after migrations")
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestConfigCommand(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("http:\n  address: \":9123\"\n"), 0o600))
	e := newEnv(t, "sqlite")
	opts := kernel.Options{ConfigDir: dir, Environ: []string{"CONTRACTFLOW_JWT_SECRET=" + strings.Repeat("s3cr3t", 8)},
		Modules: e.opts(nil).Modules}
	var out bytes.Buffer
	require.NoError(t, cli.Run(context.Background(), opts, []string{"config"}, &out))
	lines := map[string][]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = f[1:]
		}
	}
	assert.Equal(t, []string{"VALUE", "SOURCE"}, lines["KEY"])
	assert.Equal(t, []string{":9123", "file", filepath.Join(dir, "config.yaml") + ":2"}, lines["http.address"])
	assert.Equal(t, []string{"******", "variable", "CONTRACTFLOW_JWT_SECRET"}, lines["jwt.secret"])
	assert.Equal(t, []string{"300", "default"}, lines["ratelimit.globalperminute"])
	assert.Equal(t, []string{"true", "default"}, lines["modules.gadgets.enabled"])
	assert.NotContains(t, out.String(), "s3cr3t")
}

func TestHealthCommand(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		wantErr string
	}{
		{name: "ready", status: 200},
		{name: "not ready", status: 503, wantErr: "503"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, "/health/ready", r.URL.Path)
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			e := newEnv(t, "sqlite")
			addr := strings.TrimPrefix(srv.URL, "http://")
			var out bytes.Buffer
			// No --url: the probe goes to the configured http.address.
			err := cli.Run(context.Background(), e.opts(map[string]any{"http.address": addr}), []string{"health"}, &out)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, out.String(), "ready")
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown word", []string{"frobnicate"}},
		{"unknown migrate subcommand", []string{"migrate", "down"}},
		{"version with extra words", []string{"version", "now"}},
		{"empty", []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "sqlite")
			out, err := e.run(t, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "unknown command")
			assert.Empty(t, out)
		})
	}
}

func TestConfigErrorIsReturned(t *testing.T) {
	e := newEnv(t, "sqlite")
	var out bytes.Buffer
	err := cli.Run(context.Background(), e.opts(map[string]any{"database.driver": "oracle"}), []string{"migrate", "status"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "database.driver")
}

func TestMainExitCodes(t *testing.T) {
	// Main reads the process environment and ./config by default; point it
	// at a folder whose database lives in the test's temp dir.
	dir := t.TempDir()
	dsn := filepath.Join(dir, "cf.db")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"),
		[]byte("database:\n  dsn: "+dsn+"\nstorage:\n  path: "+filepath.Join(dir, "files")+"\nlog:\n  level: error\n"), 0o600))
	bad := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bad, "config.yaml"), []byte("htp:\n  address: x\n"), 0o600))

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string
		wantErrOut []string
	}{
		{name: "version", args: []string{"--config", dir, "version"}, wantCode: 0, wantOut: "contractflow "},
		{name: "unknown command", args: []string{"--config", dir, "frobnicate"}, wantCode: 2,
			wantErrOut: []string{`unknown command "frobnicate"`, "Usage: contractflow", "migrate status"}},
		{name: "unknown flag", args: []string{"--nope"}, wantCode: 2, wantErrOut: []string{"-nope", "Usage: contractflow"}},
		{name: "failing command", args: []string{"--config", bad, "migrate", "status"}, wantCode: 1,
			wantErrOut: []string{"contractflow:", "htp"}},
		{name: "migrate status", args: []string{"--config", dir, "migrate", "status"}, wantCode: 0, wantOut: "MODULE"},
		{name: "flags after the command", args: []string{"migrate", "status", "--config", dir}, wantCode: 0, wantOut: "MODULE"},
		{name: "--config=DIR after the command", args: []string{"version", "--config=" + dir}, wantCode: 0, wantOut: "contractflow "},
		{name: "help", args: []string{"help"}, wantCode: 0, wantOut: "Usage: contractflow"},
		{name: "-h", args: []string{"-h"}, wantCode: 0, wantOut: "Usage: contractflow"},
		{name: "--help", args: []string{"--help"}, wantCode: 0, wantOut: "Usage: contractflow"},
		{name: "--help after a command", args: []string{"serve", "--help"}, wantCode: 0, wantOut: "Usage: contractflow"},
		{name: "missing config folder", args: []string{"serve", "--config", filepath.Join(dir, "nope")}, wantCode: 1,
			wantErrOut: []string{"--config", "nope", "does not exist"}},
		{name: "--config without a folder", args: []string{"serve", "--config"}, wantCode: 2, wantErrOut: []string{"needs a folder"}},
		{name: "config prints each value's source", args: []string{"config", "--config", dir}, wantCode: 0, wantOut: "KEY"},
		{name: "health of a service that is not running", args: []string{"health", "--url", "http://127.0.0.1:1/health/ready"}, wantCode: 1,
			wantErrOut: []string{"health:", "127.0.0.1:1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli.Main(tc.args, &stdout, &stderr)
			assert.Equal(t, tc.wantCode, code, "stderr: %s", stderr.String())
			if tc.wantOut != "" {
				assert.True(t, strings.HasPrefix(stdout.String(), tc.wantOut), "stdout %q", stdout.String())
			}
			for _, s := range tc.wantErrOut {
				assert.Contains(t, stderr.String(), s)
			}
		})
	}
}
