package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/cache"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/config"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/logging"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/ratelimit"
	"github.com/contractflow/contractflow/platform/scheduler"
	"github.com/contractflow/contractflow/platform/storage"
	"github.com/contractflow/contractflow/platform/web"
)

// Options tell the kernel where its configuration comes from and which
// modules to load. The zero value serves the compiled-in modules with
// configuration from ./config and the process environment.
type Options struct {
	ConfigDir string         // holds config.yaml and config.<env>.yaml
	Environ   []string       // nil: os.Environ()
	Set       map[string]any // configuration overrides (tests)
	Modules   []Factory      // nil: every registered module
	Clock     clock.Clock    // nil: the system clock
	LogOutput io.Writer      // nil: os.Stdout
	Version   string         // shown in the OpenAPI document
}

// Kernel is one running instance of the service.
type Kernel struct {
	opts     Options
	app      *App            // the kernel's own view
	views    map[string]*App // each enabled module's view, by name
	all      []Module        // every compiled-in module, in dependency order
	enabled  []Module        // the enabled ones, in dependency order
	rotator  *logging.Rotator
	sched    *scheduler.Scheduler
	http     *fiber.App
	routes   []routeEntry
	pages    []web.Page
	rlStore  *ratelimit.SharedStore
	addr     chan string        // receives the bound address once Serve listens
	inFlight atomic.Int64       // requests being served, for the shutdown log
	bg       sync.WaitGroup     // the modules' Background work
	stopBg   context.CancelFunc // ends it; nil until Serve listens

	provisioned []Module
}

// LoadConfig loads the configuration the kernel would run with, modules'
// sections included, without opening anything: `contractflow config` and
// `contractflow health` read it.
func LoadConfig(opts Options) (*config.Config, error) {
	_, cfg, err := loadConfig(opts)
	return cfg, err
}

func loadConfig(opts Options) ([]Module, *config.Config, error) {
	factories := opts.Modules
	if factories == nil {
		factories = Registered()
	}
	all := make([]Module, 0, len(factories))
	names := make([]string, 0, len(factories))
	for _, f := range factories {
		m := f()
		all = append(all, m)
		names = append(names, m.Info().Name)
	}
	sections, err := configSections(all)
	if err != nil {
		return nil, nil, err
	}
	if err := checkMenus(all); err != nil {
		return nil, nil, err
	}
	cfg, err := config.Load(config.Options{
		Dir: opts.ConfigDir, Environ: opts.Environ, Modules: names, Sections: sections, Set: opts.Set,
	})
	if err != nil {
		return nil, nil, err
	}
	return all, cfg, nil
}

// New loads the configuration, resolves the modules and opens the database.
// Nothing is migrated or started yet.
func New(opts Options) (*Kernel, error) {
	all, cfg, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	ordered, err := order(all)
	if err != nil {
		return nil, err
	}
	if err := checkEnabled(ordered, cfg.ModuleEnabled); err != nil {
		return nil, err
	}

	blobs, err := storage.NewLocal(cfg.Storage.Path)
	if err != nil {
		return nil, fmt.Errorf("config key storage.path: %w", err)
	}
	out := opts.LogOutput
	if out == nil {
		out = os.Stdout
	}
	log, rotator, err := logging.New(cfg.Log.Level, cfg.IsProduction(), cfg.Log.Dir, cfg.Log.MaxAgeDays, out)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.System{}
	}
	dbWhere, dbExisted := describeDatabase(cfg.Database.Driver, cfg.Database.DSN)
	opened := time.Now()
	database, err := db.Open(db.Config{
		Driver: cfg.Database.Driver, DSN: cfg.Database.DSN, MaxOpenConns: cfg.Database.MaxOpenConns, Logger: log,
	})
	if err != nil {
		if rotator != nil {
			_ = rotator.Close()
		}
		return nil, err
	}
	switch {
	case cfg.Database.Driver != "sqlite":
		log.Info("database opened", "driver", cfg.Database.Driver, "at", dbWhere, "took", time.Since(opened))
	case dbExisted:
		log.Info("database opened", "driver", "sqlite", "file", dbWhere, "took", time.Since(opened))
	default:
		log.Info("database created", "driver", "sqlite", "file", dbWhere, "took", time.Since(opened))
	}
	k := &Kernel{
		opts:    opts,
		addr:    make(chan string, 1),
		all:     ordered,
		rotator: rotator,
		app: newApp(App{Config: cfg, DB: database, Log: log, Clock: clk, Bus: events.NewBus(log), Blobs: blobs,
			Caches: cache.NewBus(cache.Config{DB: database, DSN: cfg.Database.DSN, Log: log})}),
		views: map[string]*App{},
	}
	for _, m := range ordered {
		if cfg.ModuleEnabled(m.Info().Name) {
			k.enabled = append(k.enabled, m)
			k.views[m.Info().Name] = k.app.forModule(m.Info())
			if mp, ok := m.(MenuProvider); ok {
				k.app.reg.menus = append(k.app.reg.menus, mp.Menus()...)
			}
		}
	}
	k.warnOrphanConsumers()
	return k, nil
}

// App returns the kernel's own view of the shared infrastructure handed to
// modules. It is no module's view, so it may take any service (tests and
// the CLI use it); modules get views that check what they take.
func (k *Kernel) App() *App { return k.app }

// Enabled returns the names of the enabled modules in start order.
func (k *Kernel) Enabled() []string {
	out := make([]string, len(k.enabled))
	for i, m := range k.enabled {
		out[i] = m.Info().Name
	}
	return out
}

// migrationSets lists the platform's migrations, then every compiled-in
// module's, enabled or not.
func (k *Kernel) migrationSets() []migrate.Set {
	sets := []migrate.Set{{Module: PlatformModule, Migrations: ratelimit.Migrations()}, {Module: "web", Migrations: web.Migrations()}}
	for _, m := range k.all {
		if mg, ok := m.(Migrator); ok {
			sets = append(sets, migrate.Set{Module: m.Info().Name, Migrations: mg.Migrations()})
		}
	}
	return sets
}

// Migrate applies pending migrations and returns them.
func (k *Kernel) Migrate(ctx context.Context) ([]migrate.Status, error) {
	return migrate.Up(ctx, k.app.DB, k.migrationSets())
}

// MigrationStatus lists every migration with its applied time.
func (k *Kernel) MigrationStatus(ctx context.Context) ([]migrate.Status, error) {
	return migrate.List(ctx, k.app.DB, k.migrationSets())
}

// Provision builds each enabled module's services, in dependency order.
func (k *Kernel) Provision(ctx context.Context) error {
	for _, m := range k.enabled {
		if p, ok := m.(Provisioner); ok {
			err := p.Provision(ctx, k.views[m.Info().Name])
			// A module may swallow Need's error or use Lookup's false; the
			// undeclared dependency still fails the start.
			drift := k.app.takeDrift()
			if err != nil {
				return fmt.Errorf("provision module %s: %w", m.Info().Name, err)
			}
			if len(drift) > 0 {
				k.provisioned = append(k.provisioned, m) // it started; Close stops it
				return fmt.Errorf("provision module %s: %w", m.Info().Name, errors.Join(drift...))
			}
		}
		k.provisioned = append(k.provisioned, m)
	}
	return nil
}

// Seed runs each enabled module's seed step, in dependency order. Nodes
// starting together on one database seed one after the other, so each finds
// what the previous one inserted.
func (k *Kernel) Seed(ctx context.Context) error {
	return k.app.DB.Serialized(ctx, "kernel.seed", func(ctx context.Context) error {
		for _, m := range k.enabled {
			if s, ok := m.(Seeder); ok {
				err := s.Seed(ctx, k.views[m.Info().Name])
				if drift := k.app.takeDrift(); err == nil && len(drift) > 0 {
					err = errors.Join(drift...)
				}
				if err != nil {
					return fmt.Errorf("seed module %s: %w", m.Info().Name, err)
				}
			}
		}
		return nil
	})
}

// Start migrates, provisions, seeds and builds the HTTP handler, without
// listening or starting jobs: what tests and Serve share.
func (k *Kernel) Start(ctx context.Context) error {
	log := k.app.Log
	began := time.Now()
	applied, err := k.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		log.Info("database schema up to date", "took", time.Since(began))
	} else {
		names := make([]string, len(applied))
		for i, s := range applied {
			names[i] = fmt.Sprintf("%s %04d %s", s.Module, s.Version, s.Name)
		}
		log.Info("migrations applied", "count", len(applied), "migrations", names, "took", time.Since(began))
	}
	if err := k.app.Caches.Start(ctx); err != nil {
		return err
	}
	if err := k.Provision(ctx); err != nil {
		return err
	}
	began = time.Now()
	before := k.tableCounts(ctx)
	if err := k.Seed(ctx); err != nil {
		return err
	}
	if created := seedDelta(before, k.tableCounts(ctx)); len(created) == 0 {
		log.Info("seed created nothing new", "took", time.Since(began))
	} else {
		log.Info("seed created rows", "rows", created, "took", time.Since(began))
	}
	if err := k.buildHTTP(); err != nil {
		return err
	}
	k.app.markStarted()
	return nil
}

// HTTP returns the handler built by Start.
func (k *Kernel) HTTP() *fiber.App { return k.http }

// Jobs returns the background jobs of the enabled modules and the platform.
func (k *Kernel) Jobs() []scheduler.Job {
	var jobs []scheduler.Job
	if k.rotator != nil {
		jobs = append(jobs, k.rotator.Job())
	}
	if k.rlStore != nil {
		jobs = append(jobs, ratelimit.Jobs(k.rlStore, k.app.Clock)...)
	}
	for _, m := range k.enabled {
		if jp, ok := m.(JobProvider); ok {
			jobs = append(jobs, jp.Jobs()...)
		}
	}
	return jobs
}

// Serve starts everything, listens on http.address and blocks until ctx is
// cancelled (SIGINT/SIGTERM in the CLI); then it stops taking requests, lets
// in-flight ones finish within http.shutdownTimeout, stops the jobs and
// closes the database.
func (k *Kernel) Serve(ctx context.Context) error {
	if err := k.Start(ctx); err != nil {
		return errors.Join(err, k.Close(context.Background()))
	}
	cfg := k.app.Config
	tcp, err := net.Listen("tcp", cfg.HTTP.Address)
	if err != nil {
		return errors.Join(fmt.Errorf("listen on %s: %w", cfg.HTTP.Address, err), k.Close(context.Background()))
	}
	ln := newSilentConns(tcp)
	sched, err := scheduler.New(k.app.Log, cfg.HTTP.ShutdownTimeout)
	if err != nil {
		return errors.Join(err, k.Close(context.Background()))
	}
	for _, j := range k.Jobs() {
		if err := sched.Add(j); err != nil {
			return errors.Join(err, k.Close(context.Background()))
		}
	}
	k.sched = sched
	sched.Start()

	// Start-up garbage (migrations, seeding, the merged OpenAPI document)
	// goes back to the OS now rather than whenever the runtime gets round to it.
	debug.FreeOSMemory()
	k.addr <- ln.Addr().String()
	served := make(chan error, 1)
	go func() { served <- k.http.Listener(ln) }()
	k.startBackground(ctx)
	k.app.Log.Info("contractflow started", "listen", "http://"+ln.Addr().String(), "modules", k.Enabled(),
		"database", cfg.Database.Driver, "env", cfg.App.Env, "jobs", len(k.Jobs()))

	select {
	case err = <-served: // the listener failed on its own
	case <-ctx.Done():
		began := time.Now()
		k.app.Log.Info("shutting down: no new requests; waiting for in-flight ones",
			"inFlight", k.inFlight.Load(), "upTo", cfg.HTTP.ShutdownTimeout)
		stop := make(chan error, 1)
		go func() { stop <- k.http.ShutdownWithTimeout(cfg.HTTP.ShutdownTimeout) }()
		// Shutdown closes the listener first: then no connection that has
		// not sent a byte yet will carry a request.
		for wait := true; wait; {
			select {
			case err = <-stop:
				wait = false
			case <-time.After(100 * time.Millisecond):
				ln.closeSilent()
			}
		}
		if left := k.inFlight.Load(); left > 0 || err != nil {
			k.app.Log.Warn("requests still running at the shutdown timeout were cut off", "requests", left, "err", err)
		} else {
			k.app.Log.Info("in-flight requests finished", "took", time.Since(began))
		}
	}
	began := time.Now()
	err = errors.Join(err, k.Close(context.Background()))
	k.app.Log.Info("stopped: background jobs finished, modules stopped, database closed", "took", time.Since(began))
	return err
}

// startBackground runs each enabled module's Background work.
func (k *Kernel) startBackground(ctx context.Context) {
	var work []Backgrounder
	for _, m := range k.enabled {
		if b, ok := m.(Backgrounder); ok {
			work = append(work, b)
		}
	}
	bgCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	k.stopBg = stop
	if len(work) == 0 {
		return
	}
	k.bg.Go(func() {
		var wg sync.WaitGroup
		for _, b := range work {
			wg.Go(func() { b.Background(bgCtx) })
		}
		wg.Wait()
		// Their garbage (a password hash computed in the process, with
		// identity.hashIsolation: inline, is 19 MiB alone) goes back to the
		// OS as well, or an idle service would keep it for minutes.
		debug.FreeOSMemory()
	})
}

// Listening delivers the address Serve listens on, once it does.
func (k *Kernel) Listening() <-chan string { return k.addr }

// Close stops the jobs, the modules (in reverse order) and the database.
func (k *Kernel) Close(ctx context.Context) error {
	var errs []error
	if k.stopBg != nil {
		k.stopBg()
		k.bg.Wait()
		k.stopBg = nil
	}
	if k.sched != nil {
		began := time.Now()
		k.app.Log.Info("waiting for running background jobs", "upTo", k.app.Config.HTTP.ShutdownTimeout)
		errs = append(errs, k.sched.Stop())
		k.app.Log.Info("background jobs stopped", "took", time.Since(began))
		k.sched = nil
	}
	for _, m := range slices.Backward(k.provisioned) {
		if s, ok := m.(Stopper); ok {
			if err := s.Stop(ctx); err != nil {
				errs = append(errs, fmt.Errorf("stop module %s: %w", m.Info().Name, err))
			}
		}
	}
	k.provisioned = nil
	k.app.Caches.Stop()
	errs = append(errs, k.app.DB.Close())
	if k.rotator != nil {
		errs = append(errs, k.rotator.Close())
	}
	return errors.Join(errs...)
}

// warnOrphanConsumers logs topics an enabled module consumes that no enabled
// module publishes: legal (the consumer simply hears nothing) but worth seeing.
func (k *Kernel) warnOrphanConsumers() {
	published := map[string]bool{}
	for _, m := range k.enabled {
		if d, ok := m.(EventDeclarer); ok {
			for _, t := range d.Events().Publishes {
				published[t] = true
			}
		}
	}
	for _, m := range k.enabled {
		if d, ok := m.(EventDeclarer); ok {
			for _, t := range d.Events().Consumes {
				if !published[t] {
					k.app.Log.Warn("module consumes an event no enabled module publishes",
						slog.String("module", m.Info().Name), slog.String("topic", t))
				}
			}
		}
	}
}

// Commands returns the CLI commands of the enabled modules.
func (k *Kernel) Commands() []Command {
	var out []Command
	for _, m := range k.enabled {
		if cp, ok := m.(CommandProvider); ok {
			out = append(out, cp.Commands()...)
		}
	}
	return out
}

// describeDatabase says where the database is, for the start-up log: the
// absolute file of SQLite (and whether it existed before opening), or the
// host and database of Postgres without the password.
func describeDatabase(driver, dsn string) (where string, existed bool) {
	if driver != "sqlite" {
		if u, err := url.Parse(dsn); err == nil && u.Host != "" {
			return u.Host + u.Path, true
		}
		var parts []string
		for _, f := range strings.Fields(dsn) {
			if k, _, _ := strings.Cut(f, "="); k == "host" || k == "port" || k == "dbname" {
				parts = append(parts, f)
			}
		}
		return strings.Join(parts, " "), true
	}
	path := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == ":memory:" || strings.Contains(dsn, "mode=memory") {
		return "memory", false
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	_, err := os.Stat(path)
	return path, err == nil
}

// tableCounts counts the rows of every table, so start-up can say what the
// seed created without each module reporting it. Failures give no counts.
func (k *Kernel) tableCounts(ctx context.Context) map[string]int64 {
	conn := k.app.DB.Conn(ctx)
	tables, err := conn.Migrator().GetTables()
	if err != nil {
		return nil
	}
	counts := make(map[string]int64, len(tables))
	for _, t := range tables {
		var n int64
		if conn.Table(t).Count(&n).Error == nil {
			counts[t] = n
		}
	}
	return counts
}

// seedDelta lists the tables that gained rows, as "table +n", sorted.
func seedDelta(before, after map[string]int64) []string {
	var out []string
	for t, n := range after {
		if d := n - before[t]; d > 0 && before != nil {
			out = append(out, fmt.Sprintf("%s +%d", t, d))
		}
	}
	slices.Sort(out)
	return out
}
