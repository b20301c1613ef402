// Package config loads the service configuration in layers: the embedded
// defaults, config/config.yaml, config/config.<env>.yaml, then CONTRACTFLOW_*
// environment variables. Every key is checked at start; an unknown key, an
// unknown module or an invalid value is an error that names the key.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // the business time zone must resolve on hosts without tzdata

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/contractflow/contractflow/config"
	"github.com/contractflow/contractflow/platform/calendar"
)

// EnvPrefix starts every environment variable the service reads.
const EnvPrefix = "CONTRACTFLOW_"

// Config is the platform's part of the configuration. Modules own their own
// sections (see Options.Sections).
type Config struct {
	App struct {
		Env string `mapstructure:"env"`
	} `mapstructure:"app"`
	HTTP struct {
		Address         string        `mapstructure:"address"`
		MaxBodyBytes    int           `mapstructure:"maxBodyBytes"`
		ShutdownTimeout time.Duration `mapstructure:"shutdownTimeout"`
		ReadTimeout     time.Duration `mapstructure:"readTimeout"`
		WriteTimeout    time.Duration `mapstructure:"writeTimeout"`
		TrustedProxies  []string      `mapstructure:"trustedProxies"`
	} `mapstructure:"http"`
	AllowedOrigins []string `mapstructure:"allowedOrigins"`
	Database       struct {
		Driver       string `mapstructure:"driver"`
		DSN          string `mapstructure:"dsn"`
		MaxOpenConns int    `mapstructure:"maxOpenConns"`
	} `mapstructure:"database"`
	Storage struct {
		Path string `mapstructure:"path"`
	} `mapstructure:"storage"`
	Uploads struct {
		MaxBytes int `mapstructure:"maxBytes"`
	} `mapstructure:"uploads"`
	RateLimit struct {
		Enabled         bool `mapstructure:"enabled"`
		GlobalPerMinute int  `mapstructure:"globalPerMinute"`
		LoginPerMinute  int  `mapstructure:"loginPerMinute"`
	} `mapstructure:"rateLimit"`
	Log struct {
		Level      string `mapstructure:"level"`
		Dir        string `mapstructure:"dir"`
		MaxAgeDays int    `mapstructure:"maxAgeDays"`
	} `mapstructure:"log"`
	Business struct {
		TimeZone string `mapstructure:"timeZone"`
		// Language is the business language of documents the service
		// writes for people (the Excel export): vi (default) or en.
		Language string `mapstructure:"language"`
		// WorkingDays, WorkingHours and Holidays describe working time for
		// SLA deadlines when a module's sla.calendar is workingHours; see
		// package calendar and Config.Calendar.
		WorkingDays  []string       `mapstructure:"workingDays"`
		WorkingHours []string       `mapstructure:"workingHours"`
		Holidays     []string       `mapstructure:"holidays"`
		Location     *time.Location `mapstructure:"-"`
	} `mapstructure:"business"`
	JWT struct {
		Secret             string `mapstructure:"secret"`
		Issuer             string `mapstructure:"issuer"`
		Audience           string `mapstructure:"audience"`
		AccessTokenMinutes int    `mapstructure:"accessTokenMinutes"`
		RefreshTokenDays   int    `mapstructure:"refreshTokenDays"`
	} `mapstructure:"jwt"`
	Seed struct {
		Demo          bool   `mapstructure:"demo"`
		AdminEmail    string `mapstructure:"adminEmail"`
		AdminPassword string `mapstructure:"adminPassword"`
	} `mapstructure:"seed"`
	Metrics struct {
		Address string `mapstructure:"address"`
	} `mapstructure:"metrics"`
	Modules map[string]ModuleToggle `mapstructure:"modules"`

	settings []Setting // the effective configuration with its sources
}

// ModuleToggle is the per-module switch under modules.<name>.
type ModuleToggle struct {
	Enabled bool `mapstructure:"enabled"`
}

// IsProduction reports whether app.env is production.
func (c *Config) IsProduction() bool { return c.App.Env == "production" }

// ModuleEnabled reports whether modules.<name>.enabled is true.
func (c *Config) ModuleEnabled(name string) bool {
	t, ok := c.Modules[strings.ToLower(name)]
	return !ok || t.Enabled
}

// Calendar returns the SLA calendar of the given mode (a module's
// sla.calendar) over the business.* working time, so every module that
// computes deadlines counts them the same way.
func (c *Config) Calendar(mode calendar.Mode) (*calendar.Calendar, error) {
	return calendar.New(calendar.Config{
		Mode:         mode,
		Location:     c.Business.Location,
		WorkingDays:  c.Business.WorkingDays,
		WorkingHours: c.Business.WorkingHours,
		Holidays:     c.Business.Holidays,
	})
}

// codeDefaults are defaults kept next to the code that gives them meaning
// rather than in config/defaults.yaml; a value there (or in any later
// layer) wins over these.
var codeDefaults = map[string]any{
	"business.workingDays":  strings.Split(calendar.DefaultWorkingDays, ","),
	"business.workingHours": strings.Split(calendar.DefaultWorkingHours, ","),
	"business.holidays":     []string{},
}

// Options tell Load where to look and which module sections exist.
type Options struct {
	// Dir holds config.yaml and config.<env>.yaml; missing files are skipped.
	Dir string
	// Environ is the environment to read (os.Environ() when nil).
	Environ []string
	// Modules are the names of the compiled-in modules.
	Modules []string
	// Sections maps a top-level key owned by a module to a pointer to its
	// struct, pre-filled with defaults; Load decodes the section into it.
	Sections map[string]any
	// Set overrides keys after every other layer (tests).
	Set map[string]any
}

// DefaultJWTSecret is refused in production.
const DefaultJWTSecret = "contractflow-development-secret-change-me"

// ExampleJWTSecret is config/config.example.yaml's secret, refused in
// production: copying the example must not give a known key.
const ExampleJWTSecret = "at-least-32-bytes-of-random-secret-material"

// PublishedDatabasePasswords are the database passwords written in this
// repository (docker-compose.yml's former default, config.example.yaml's),
// refused in production.
var PublishedDatabasePasswords = []string{"contractflow", "secret"}

// dsnPasswordOf finds the password of a Postgres DSN, URL or key=value.
func dsnPasswordOf(dsn string) (string, bool) {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.User.Password()
	}
	for _, f := range strings.Fields(dsn) {
		if k, v, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") {
			return strings.Trim(v, "'"), true
		}
	}
	return "", false
}

// Load reads, merges, decodes and validates the configuration. Every error
// names the key and where its value came from (file and line, or variable),
// and for an unknown key the nearest known one.
func Load(opts Options) (*Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(config.Defaults)); err != nil {
		return nil, fmt.Errorf("embedded defaults: %w", err)
	}
	for key, val := range codeDefaults {
		v.SetDefault(key, val)
	}
	for key, ptr := range opts.Sections {
		defaults := map[string]any{}
		if err := mapstructure.Decode(ptr, &defaults); err != nil {
			return nil, fmt.Errorf("defaults of %s: %w", key, err)
		}
		v.SetDefault(key, defaults)
	}
	for _, m := range opts.Modules {
		v.SetDefault("modules."+strings.ToLower(m)+".enabled", true)
	}
	prov := newProvenance(v.AllKeys())

	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	env := lookup(environ, EnvPrefix+"APP_ENV")
	if err := mergeFile(v, prov, opts.Dir, "config.yaml"); err != nil {
		return nil, err
	}
	if env == "" {
		env = v.GetString("app.env")
	}
	if err := mergeFile(v, prov, opts.Dir, "config."+env+".yaml"); err != nil {
		return nil, err
	}
	if err := applyEnv(v, prov, environ); err != nil {
		return nil, err
	}
	for k, val := range opts.Set {
		v.Set(k, val)
		prov.sources[strings.ToLower(k)] = Source{Origin: FromOverride}
	}

	all := v.AllSettings()
	for key, ptr := range opts.Sections {
		sub, _ := all[strings.ToLower(key)].(map[string]any)
		if err := decode(sub, ptr, key+".", prov); err != nil {
			return nil, err
		}
		delete(all, strings.ToLower(key))
	}
	cfg := &Config{}
	if err := decode(all, cfg, "", prov); err != nil {
		return nil, err
	}
	if err := cfg.validate(opts.Modules, prov); err != nil {
		return nil, err
	}
	for _, k := range v.AllKeys() {
		src, ok := prov.sources[k]
		if !ok {
			src = Source{Origin: FromDefault}
		}
		cfg.settings = append(cfg.settings, Setting{Key: k, Value: maskValue(k, v.Get(k)), Source: src})
	}
	slices.SortFunc(cfg.settings, func(a, b Setting) int { return strings.Compare(a.Key, b.Key) })
	return cfg, nil
}

// Settings lists every key of the effective configuration with its value
// (secrets masked) and where the value came from, sorted by key.
func (c *Config) Settings() []Setting { return slices.Clone(c.settings) }

func lookup(environ []string, name string) string {
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			return val
		}
	}
	return ""
}

func mergeFile(v *viper.Viper, prov *provenance, dir, name string) error {
	if dir == "" {
		return nil
	}
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if err := v.MergeConfig(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return prov.addFile(path, data)
}

// ReservedVariables are CONTRACTFLOW_ variables that name no key and are
// still allowed: the configuration folder, and CONTRACTFLOW_TEST_* for the
// test suite.
func reservedVariable(name string) bool {
	return name == EnvPrefix+"CONFIG_DIR" || strings.HasPrefix(name, EnvPrefix+"TEST_")
}

// applyEnv maps CONTRACTFLOW_A_B to key a.b. Keys are camelCase without
// underscores, so the mapping is unambiguous. A variable that names no key
// is an error naming the nearest known key's variable (a typo would
// otherwise be silently ignored); reserved variables aside.
func applyEnv(v *viper.Viper, prov *provenance, environ []string) error {
	known := map[string]bool{}
	for _, k := range prov.known {
		known[k] = true
	}
	var errs []error
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || reservedVariable(name) {
			continue
		}
		key := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, EnvPrefix), "_", "."))
		switch {
		case known[key]:
			v.Set(key, val)
			prov.sources[key] = Source{Origin: FromVariable, Variable: name}
		case strings.HasPrefix(key, "modules.") && strings.Count(key, ".") == 2 && strings.HasSuffix(key, ".enabled"):
			errs = append(errs, fmt.Errorf("config: %s names unknown module %q", name, strings.Split(key, ".")[1]))
		default:
			prov.sources[key] = Source{Origin: FromVariable, Variable: name}
			errs = append(errs, prov.unknownKey(key))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// decode fills out from input. Unknown keys and values of the wrong type
// are errors that say where they were set.
func decode(input map[string]any, out any, prefix string, prov *provenance) error {
	var md mapstructure.Metadata
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           out,
		WeaklyTypedInput: true,
		Metadata:         &md,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			durationHook,
			commaListHook,
			yamlDateHook,
		),
	})
	if err != nil {
		return err
	}
	var errs []error
	if err := dec.Decode(input); err != nil {
		errs = append(errs, prov.decodeErrors(err, prefix))
	}
	slices.Sort(md.Unused)
	for _, k := range md.Unused {
		errs = append(errs, prov.unknownKey(prefix+k))
	}
	return errors.Join(errs...)
}

// commaListHook turns a comma-separated string (how an environment variable
// carries a list) into a list, trimming the spaces people put after commas;
// an empty string is an empty list.
func commaListHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to.Kind() != reflect.Slice {
		return data, nil
	}
	s := reflect.ValueOf(data).String()
	if strings.TrimSpace(s) == "" {
		return []string{}, nil
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts, nil
}

// yamlDateHook gives back the text of an unquoted YAML date: the YAML
// reader turns `- 2026-09-02` into a time, but a string key such as
// business.holidays wants it as written.
func yamlDateHook(from, to reflect.Type, data any) (any, error) {
	t, ok := data.(time.Time)
	if !ok || to.Kind() != reflect.String {
		return data, nil
	}
	if t.Equal(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)) {
		return t.Format(time.DateOnly), nil
	}
	return t.Format(time.RFC3339Nano), nil
}

func (c *Config) validate(modules []string, prov *provenance) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config key %s%s: "+format, append([]any{key, prov.where(key)}, args...)...))
	}
	if c.App.Env != "development" && c.App.Env != "production" {
		bad("app.env", "must be development or production, got %q", c.App.Env)
	}
	if c.HTTP.Address == "" {
		bad("http.address", "must not be empty")
	}
	if c.HTTP.MaxBodyBytes <= 0 {
		bad("http.maxBodyBytes", "must be positive")
	}
	if c.HTTP.ShutdownTimeout <= 0 {
		bad("http.shutdownTimeout", "must be positive")
	}
	for _, p := range c.HTTP.TrustedProxies {
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				bad("http.trustedProxies", "%q is neither an IP nor a CIDR", p)
			}
		}
	}
	for _, o := range c.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			bad("allowedOrigins", "%q is not an origin like https://app.example.com", o)
		}
	}
	switch c.Database.Driver {
	case "sqlite", "postgres":
	default:
		bad("database.driver", "must be sqlite or postgres, got %q", c.Database.Driver)
	}
	if c.Database.DSN == "" {
		bad("database.dsn", "must not be empty")
	}
	if c.Database.MaxOpenConns < 1 {
		bad("database.maxOpenConns", "must be at least 1")
	}
	if c.Storage.Path == "" {
		bad("storage.path", "must not be empty")
	}
	if c.Uploads.MaxBytes <= 0 {
		bad("uploads.maxBytes", "must be positive")
	}
	if c.RateLimit.GlobalPerMinute < 1 {
		bad("rateLimit.globalPerMinute", "must be at least 1")
	}
	if c.RateLimit.LoginPerMinute < 1 {
		bad("rateLimit.loginPerMinute", "must be at least 1")
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		bad("log.level", "must be debug, info, warn or error, got %q", c.Log.Level)
	}
	if c.Log.MaxAgeDays < 1 {
		bad("log.maxAgeDays", "must be at least 1")
	}
	if c.Business.Language != "vi" && c.Business.Language != "en" {
		bad("business.language", "must be vi or en, got %q", c.Business.Language)
	}
	loc, err := time.LoadLocation(c.Business.TimeZone)
	if err != nil {
		bad("business.timeZone", "unknown time zone %q", c.Business.TimeZone)
	}
	c.Business.Location = loc
	// The working-time keys are checked whatever sla.calendar says, so
	// switching a module to workingHours never meets a bad value late.
	if loc == nil {
		loc = time.UTC // already reported above
	}
	if _, err := calendar.New(calendar.Config{
		Mode: calendar.WorkingHours, Location: loc,
		WorkingDays: c.Business.WorkingDays, WorkingHours: c.Business.WorkingHours, Holidays: c.Business.Holidays,
	}); err != nil {
		errs = append(errs, err)
	}
	if c.IsProduction() {
		switch {
		case c.JWT.Secret == DefaultJWTSecret || c.JWT.Secret == ExampleJWTSecret:
			bad("jwt.secret", "production refuses the published default/example secret; set CONTRACTFLOW_JWT_SECRET to at least 32 random bytes, e.g. $(openssl rand -hex 32)")
		case len(c.JWT.Secret) < 32:
			bad("jwt.secret", "production needs at least 32 bytes, got %d; set CONTRACTFLOW_JWT_SECRET to e.g. $(openssl rand -hex 32)", len(c.JWT.Secret))
		}
		if pw, ok := dsnPasswordOf(c.Database.DSN); ok && slices.Contains(PublishedDatabasePasswords, pw) {
			bad("database.dsn", "production refuses the database password %q published in docker-compose.yml and config.example.yaml; "+
				"give the database its own password (POSTGRES_PASSWORD with the compose file) and put it in CONTRACTFLOW_DATABASE_DSN", pw)
		}
	}
	if c.JWT.AccessTokenMinutes < 1 {
		bad("jwt.accessTokenMinutes", "must be at least 1")
	}
	if c.JWT.RefreshTokenDays < 1 {
		bad("jwt.refreshTokenDays", "must be at least 1")
	}
	for name := range c.Modules {
		if !slices.ContainsFunc(modules, func(m string) bool { return strings.EqualFold(m, name) }) {
			bad("modules."+name, "unknown module %q (known: %s)", name, strings.Join(modules, ", "))
		}
	}
	return errors.Join(errs...)
}
