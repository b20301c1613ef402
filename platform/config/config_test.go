package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/calendar"
	"github.com/contractflow/contractflow/platform/config"
)

// writeDir writes the given files (name → YAML) into a new folder and
// returns it, for Options.Dir.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	return dir
}

// prodSecret is a valid production jwt.secret: 32 bytes, not the default.
const prodSecret = "0123456789abcdef0123456789abcdef"

func TestLoadDefaultsWithoutDir(t *testing.T) {
	// The binary must start with no files and no variables at all.
	cfg, err := config.Load(config.Options{Environ: []string{}})
	require.NoError(t, err)

	tests := []struct {
		name string
		got  any
		want any
	}{
		{"app.env", cfg.App.Env, "development"},
		{"http.address", cfg.HTTP.Address, ":8080"},
		{"http.maxBodyBytes", cfg.HTTP.MaxBodyBytes, 1 << 20},
		{"http.shutdownTimeout", cfg.HTTP.ShutdownTimeout, 15 * time.Second},
		{"http.trustedProxies", len(cfg.HTTP.TrustedProxies), 0},
		{"allowedOrigins", len(cfg.AllowedOrigins), 0},
		{"database.driver", cfg.Database.Driver, "sqlite"},
		{"database.dsn", cfg.Database.DSN, "./data/contractflow.db"},
		{"storage.path", cfg.Storage.Path, "./data/files"},
		{"uploads.maxBytes", cfg.Uploads.MaxBytes, 26214400},
		{"rateLimit.globalPerMinute", cfg.RateLimit.GlobalPerMinute, 300},
		{"rateLimit.loginPerMinute", cfg.RateLimit.LoginPerMinute, 5},
		{"log.level", cfg.Log.Level, "info"},
		{"business.timeZone", cfg.Business.TimeZone, "Asia/Ho_Chi_Minh"},
		{"business.location", cfg.Business.Location.String(), "Asia/Ho_Chi_Minh"},
		{"business.workingDays", cfg.Business.WorkingDays, []string{"Mon", "Tue", "Wed", "Thu", "Fri"}},
		{"business.workingHours", cfg.Business.WorkingHours, []string{"08:00-17:00"}},
		{"business.holidays", nonNil(cfg.Business.Holidays), []string{}},
		{"jwt.secret", cfg.JWT.Secret, config.DefaultJWTSecret},
		{"jwt.accessTokenMinutes", cfg.JWT.AccessTokenMinutes, 15},
		{"jwt.refreshTokenDays", cfg.JWT.RefreshTokenDays, 7},
		{"seed.adminEmail", cfg.Seed.AdminEmail, "admin@contractflow.local"},
		{"metrics.address", cfg.Metrics.Address, ""},
		{"isProduction", cfg.IsProduction(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got)
		})
	}
}

func TestLoadPrecedence(t *testing.T) {
	// Each layer sets http.address; the base file also sets log.level so we
	// can see that a later layer overrides one key without dropping others.
	base := "http:\n  address: \":9001\"\nlog:\n  level: debug\n"
	envFile := "http:\n  address: \":9002\"\n"
	tests := []struct {
		name      string
		files     map[string]string
		environ   []string
		set       map[string]any
		wantAddr  string
		wantLevel string
	}{
		{name: "embedded defaults", wantAddr: ":8080", wantLevel: "info"},
		{name: "config.yaml over defaults", files: map[string]string{"config.yaml": base},
			wantAddr: ":9001", wantLevel: "debug"},
		{name: "config.<env>.yaml over config.yaml",
			files:    map[string]string{"config.yaml": base, "config.development.yaml": envFile},
			wantAddr: ":9002", wantLevel: "debug"},
		{name: "environment over files",
			files:    map[string]string{"config.yaml": base, "config.development.yaml": envFile},
			environ:  []string{"CONTRACTFLOW_HTTP_ADDRESS=:9003"},
			wantAddr: ":9003", wantLevel: "debug"},
		{name: "Set over environment",
			files:    map[string]string{"config.yaml": base, "config.development.yaml": envFile},
			environ:  []string{"CONTRACTFLOW_HTTP_ADDRESS=:9003", "CONTRACTFLOW_LOG_LEVEL=warn"},
			set:      map[string]any{"http.address": ":9004"},
			wantAddr: ":9004", wantLevel: "warn"},
		{name: "file of another env is ignored",
			files:    map[string]string{"config.production.yaml": envFile},
			wantAddr: ":8080", wantLevel: "info"},
		{name: "camelCase Set key",
			set:      map[string]any{"HTTP.Address": ":9005", "log.Level": "error"},
			wantAddr: ":9005", wantLevel: "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			environ := tc.environ
			if environ == nil {
				environ = []string{}
			}
			cfg, err := config.Load(config.Options{Dir: writeDir(t, tc.files), Environ: environ, Set: tc.set})
			require.NoError(t, err)
			assert.Equal(t, tc.wantAddr, cfg.HTTP.Address)
			assert.Equal(t, tc.wantLevel, cfg.Log.Level)
			assert.Equal(t, 1<<20, cfg.HTTP.MaxBodyBytes, "untouched sibling keys keep their defaults")
		})
	}
}

func TestLoadEnvironmentSelectsFile(t *testing.T) {
	files := map[string]string{
		"config.development.yaml": "http:\n  address: \":7001\"\n",
		"config.production.yaml":  "http:\n  address: \":7002\"\njwt:\n  secret: " + prodSecret + "\n",
	}
	tests := []struct {
		name     string
		base     string
		environ  []string
		wantEnv  string
		wantAddr string
	}{
		{name: "default is development", wantEnv: "development", wantAddr: ":7001"},
		{name: "CONTRACTFLOW_APP_ENV picks production file",
			environ: []string{"CONTRACTFLOW_APP_ENV=production"}, wantEnv: "production", wantAddr: ":7002"},
		{name: "app.env in config.yaml picks production file",
			base: "app:\n  env: production\n", wantEnv: "production", wantAddr: ":7002"},
		{name: "variable wins over config.yaml",
			base:    "app:\n  env: production\n",
			environ: []string{"CONTRACTFLOW_APP_ENV=development"}, wantEnv: "development", wantAddr: ":7001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := map[string]string{}
			for k, v := range files {
				fs[k] = v
			}
			if tc.base != "" {
				fs["config.yaml"] = tc.base
			}
			environ := append([]string{}, tc.environ...)
			cfg, err := config.Load(config.Options{Dir: writeDir(t, fs), Environ: environ})
			require.NoError(t, err)
			assert.Equal(t, tc.wantEnv, cfg.App.Env)
			assert.Equal(t, tc.wantAddr, cfg.HTTP.Address)
			assert.Equal(t, tc.wantEnv == "production", cfg.IsProduction())
		})
	}
}

func TestLoadLists(t *testing.T) {
	tests := []struct {
		name        string
		file        string
		environ     []string
		wantOrigins []string
		wantProxies []string
	}{
		{name: "comma-separated in environment",
			environ: []string{
				"CONTRACTFLOW_ALLOWEDORIGINS=https://a.example,https://b.example",
				"CONTRACTFLOW_HTTP_TRUSTEDPROXIES=10.0.0.1,192.168.0.0/16",
			},
			wantOrigins: []string{"https://a.example", "https://b.example"},
			wantProxies: []string{"10.0.0.1", "192.168.0.0/16"}},
		{name: "spaces after commas are trimmed",
			environ: []string{
				"CONTRACTFLOW_ALLOWEDORIGINS=https://a.example, https://b.example",
				"CONTRACTFLOW_HTTP_TRUSTEDPROXIES= 10.0.0.1 , ::1",
			},
			wantOrigins: []string{"https://a.example", "https://b.example"},
			wantProxies: []string{"10.0.0.1", "::1"}},
		{name: "single value in environment",
			environ:     []string{"CONTRACTFLOW_ALLOWEDORIGINS=https://only.example"},
			wantOrigins: []string{"https://only.example"}, wantProxies: []string{}},
		{name: "empty variable clears a file list",
			file:        "allowedOrigins: [\"https://file.example\"]\n",
			environ:     []string{"CONTRACTFLOW_ALLOWEDORIGINS="},
			wantOrigins: []string{}, wantProxies: []string{}},
		{name: "YAML list in file",
			file:        "allowedOrigins:\n  - https://file.example\n  - http://localhost:5173\nhttp:\n  trustedProxies: [\"10.0.0.0/8\"]\n",
			wantOrigins: []string{"https://file.example", "http://localhost:5173"},
			wantProxies: []string{"10.0.0.0/8"}},
		{name: "environment replaces file list",
			file:        "allowedOrigins: [\"https://file.example\"]\n",
			environ:     []string{"CONTRACTFLOW_ALLOWEDORIGINS=https://env.example"},
			wantOrigins: []string{"https://env.example"}, wantProxies: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != "" {
				files["config.yaml"] = tc.file
			}
			environ := append([]string{}, tc.environ...)
			cfg, err := config.Load(config.Options{Dir: writeDir(t, files), Environ: environ})
			require.NoError(t, err)
			assert.Equal(t, tc.wantOrigins, nonNil(cfg.AllowedOrigins))
			assert.Equal(t, tc.wantProxies, nonNil(cfg.HTTP.TrustedProxies))
		})
	}
}

func TestLoadBusinessCalendar(t *testing.T) {
	weekdays := []string{"Mon", "Tue", "Wed", "Thu", "Fri"}
	tests := []struct {
		name         string
		file         string
		environ      []string
		wantDays     []string
		wantHours    []string
		wantHolidays []string
	}{
		{name: "defaults", wantDays: weekdays, wantHours: []string{"08:00-17:00"}, wantHolidays: []string{}},
		{name: "comma-separated in environment",
			environ: []string{
				"CONTRACTFLOW_BUSINESS_WORKINGDAYS=Mon,Tue,Wed,Thu,Fri,Sat",
				"CONTRACTFLOW_BUSINESS_WORKINGHOURS=08:00-12:00, 13:00-17:00",
				"CONTRACTFLOW_BUSINESS_HOLIDAYS=2026-01-01, 2026-04-30,2026-05-01",
			},
			wantDays:     []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat"},
			wantHours:    []string{"08:00-12:00", "13:00-17:00"},
			wantHolidays: []string{"2026-01-01", "2026-04-30", "2026-05-01"}},
		{name: "YAML lists in file, dates unquoted",
			file:         "business:\n  workingDays: [mon, tue]\n  workingHours:\n    - \"07:30-11:30\"\n  holidays:\n    - 2026-09-02\n    - 2027-01-01\n",
			wantDays:     []string{"mon", "tue"},
			wantHours:    []string{"07:30-11:30"},
			wantHolidays: []string{"2026-09-02", "2027-01-01"}},
		{name: "comma-separated string in file",
			file:         "business:\n  workingHours: 08:00-12:00,13:00-17:00\n",
			wantDays:     weekdays,
			wantHours:    []string{"08:00-12:00", "13:00-17:00"},
			wantHolidays: []string{}},
		{name: "environment replaces file list",
			file:         "business:\n  holidays: [2026-09-02]\n",
			environ:      []string{"CONTRACTFLOW_BUSINESS_HOLIDAYS=2026-12-25"},
			wantDays:     weekdays,
			wantHours:    []string{"08:00-17:00"},
			wantHolidays: []string{"2026-12-25"}},
		{name: "empty variable clears holidays",
			file:         "business:\n  holidays: [2026-09-02]\n",
			environ:      []string{"CONTRACTFLOW_BUSINESS_HOLIDAYS="},
			wantDays:     weekdays,
			wantHours:    []string{"08:00-17:00"},
			wantHolidays: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != "" {
				files["config.yaml"] = tc.file
			}
			environ := append([]string{}, tc.environ...)
			cfg, err := config.Load(config.Options{Dir: writeDir(t, files), Environ: environ})
			require.NoError(t, err)
			assert.Equal(t, tc.wantDays, cfg.Business.WorkingDays)
			assert.Equal(t, tc.wantHours, cfg.Business.WorkingHours)
			assert.Equal(t, tc.wantHolidays, nonNil(cfg.Business.Holidays))
		})
	}
}

func TestConfigCalendar(t *testing.T) {
	cfg, err := config.Load(config.Options{Environ: []string{"CONTRACTFLOW_BUSINESS_HOLIDAYS=2026-03-09"}})
	require.NoError(t, err)
	friday := time.Date(2026, 3, 6, 16, 0, 0, 0, cfg.Business.Location)
	tests := []struct {
		name    string
		mode    calendar.Mode
		want    time.Time
		wantErr string
	}{
		{name: "wall-clock hours", mode: calendar.Hours, want: friday.Add(8 * time.Hour)},
		{name: "working hours skip the weekend and the holiday", mode: calendar.WorkingHours,
			want: time.Date(2026, 3, 10, 15, 0, 0, 0, cfg.Business.Location)},
		{name: "unknown mode", mode: "weekdays", wantErr: "sla.calendar"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cal, err := cfg.Calendar(tc.mode)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			got := cal.Deadline(friday, 8)
			assert.True(t, tc.want.Equal(got), "got %s, want %s", got, tc.want)
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestLoadDurations(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		environ []string
		set     map[string]any
		want    time.Duration
	}{
		{name: "default", want: 15 * time.Second},
		{name: "file", file: "http:\n  shutdownTimeout: 90s\n", want: 90 * time.Second},
		{name: "environment", environ: []string{"CONTRACTFLOW_HTTP_SHUTDOWNTIMEOUT=2m30s"}, want: 150 * time.Second},
		{name: "Set as string", set: map[string]any{"http.shutdownTimeout": "250ms"}, want: 250 * time.Millisecond},
		{name: "Set as duration", set: map[string]any{"http.shutdownTimeout": 3 * time.Second}, want: 3 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != "" {
				files["config.yaml"] = tc.file
			}
			environ := append([]string{}, tc.environ...)
			cfg, err := config.Load(config.Options{Dir: writeDir(t, files), Environ: environ, Set: tc.set})
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg.HTTP.ShutdownTimeout)
		})
	}
}

func TestLoadRejectsInvalidValues(t *testing.T) {
	tests := []struct {
		name    string
		set     map[string]any
		environ []string
		file    string
		wantKey string
	}{
		{name: "app.env staging", set: map[string]any{"app.env": "staging"}, wantKey: "app.env"},
		{name: "app.env staging from environment", environ: []string{"CONTRACTFLOW_APP_ENV=staging"}, wantKey: "app.env"},
		{name: "database.driver oracle", set: map[string]any{"database.driver": "oracle"}, wantKey: "database.driver"},
		{name: "database.driver oracle from environment", environ: []string{"CONTRACTFLOW_DATABASE_DRIVER=oracle"}, wantKey: "database.driver"},
		{name: "database.dsn empty", set: map[string]any{"database.dsn": ""}, wantKey: "database.dsn"},
		{name: "rateLimit.globalPerMinute abc", environ: []string{"CONTRACTFLOW_RATELIMIT_GLOBALPERMINUTE=abc"}, wantKey: "rateLimit.globalPerMinute"},
		{name: "rateLimit.globalPerMinute 0", environ: []string{"CONTRACTFLOW_RATELIMIT_GLOBALPERMINUTE=0"}, wantKey: "rateLimit.globalPerMinute"},
		{name: "rateLimit.loginPerMinute negative", file: "rateLimit:\n  loginPerMinute: -1\n", wantKey: "rateLimit.loginPerMinute"},
		{name: "business.timeZone Mars/Base", set: map[string]any{"business.timeZone": "Mars/Base"}, wantKey: "business.timeZone"},
		{name: "http.trustedProxies not-an-ip", environ: []string{"CONTRACTFLOW_HTTP_TRUSTEDPROXIES=10.0.0.1,not-an-ip"}, wantKey: "http.trustedProxies"},
		{name: "http.trustedProxies bad CIDR in file", file: "http:\n  trustedProxies: [\"10.0.0.0/33\"]\n", wantKey: "http.trustedProxies"},
		{name: "allowedOrigins ftp", environ: []string{"CONTRACTFLOW_ALLOWEDORIGINS=ftp://x"}, wantKey: "allowedOrigins"},
		{name: "allowedOrigins without scheme", set: map[string]any{"allowedOrigins": []string{"example.com"}}, wantKey: "allowedOrigins"},
		{name: "allowedOrigins with path", set: map[string]any{"allowedOrigins": []string{"https://a.example/app"}}, wantKey: "allowedOrigins"},
		{name: "log.level loud", environ: []string{"CONTRACTFLOW_LOG_LEVEL=loud"}, wantKey: "log.level"},
		{name: "http.shutdownTimeout not a duration", environ: []string{"CONTRACTFLOW_HTTP_SHUTDOWNTIMEOUT=soon"}, wantKey: "http.shutdownTimeout"},
		{name: "http.shutdownTimeout zero", set: map[string]any{"http.shutdownTimeout": "0s"}, wantKey: "http.shutdownTimeout"},
		{name: "http.maxBodyBytes zero", set: map[string]any{"http.maxBodyBytes": 0}, wantKey: "http.maxBodyBytes"},
		{name: "uploads.maxBytes text", file: "uploads:\n  maxBytes: lots\n", wantKey: "uploads.maxBytes"},
		{name: "database.maxOpenConns zero", set: map[string]any{"database.maxOpenConns": 0}, wantKey: "database.maxOpenConns"},
		{name: "jwt.accessTokenMinutes zero", set: map[string]any{"jwt.accessTokenMinutes": 0}, wantKey: "jwt.accessTokenMinutes"},
		{name: "seed.demo not a bool", environ: []string{"CONTRACTFLOW_SEED_DEMO=maybe"}, wantKey: "seed.demo"},
		{name: "business.workingDays empty", environ: []string{"CONTRACTFLOW_BUSINESS_WORKINGDAYS="}, wantKey: "business.workingDays"},
		{name: "business.workingDays Funday", environ: []string{"CONTRACTFLOW_BUSINESS_WORKINGDAYS=Mon,Funday"}, wantKey: "business.workingDays"},
		{name: "business.workingDays twice in file", file: "business:\n  workingDays: [Mon, MON]\n", wantKey: "business.workingDays"},
		{name: "business.workingHours empty", set: map[string]any{"business.workingHours": []string{}}, wantKey: "business.workingHours"},
		{name: "business.workingHours reversed", environ: []string{"CONTRACTFLOW_BUSINESS_WORKINGHOURS=17:00-08:00"}, wantKey: "business.workingHours"},
		{name: "business.workingHours overlapping", file: "business:\n  workingHours: [\"08:00-13:00\", \"12:00-17:00\"]\n", wantKey: "business.workingHours"},
		{name: "business.workingHours unsorted", environ: []string{"CONTRACTFLOW_BUSINESS_WORKINGHOURS=13:00-17:00,08:00-12:00"}, wantKey: "business.workingHours"},
		{name: "business.workingHours not a range", environ: []string{"CONTRACTFLOW_BUSINESS_WORKINGHOURS=9 to 5"}, wantKey: "business.workingHours"},
		{name: "business.holidays impossible date", environ: []string{"CONTRACTFLOW_BUSINESS_HOLIDAYS=2026-01-01,2026-02-30"}, wantKey: "business.holidays"},
		{name: "business.holidays not a date in file", file: "business:\n  holidays:\n    - tomorrow\n", wantKey: "business.holidays"},
		{name: "business.holidays trailing comma", environ: []string{"CONTRACTFLOW_BUSINESS_HOLIDAYS=2026-01-01,"}, wantKey: "business.holidays"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != "" {
				files["config.yaml"] = tc.file
			}
			environ := append([]string{}, tc.environ...)
			_, err := config.Load(config.Options{Dir: writeDir(t, files), Environ: environ, Set: tc.set})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantKey)
		})
	}
}

func TestLoadRejectsUnknownKeysAndModules(t *testing.T) {
	modules := []string{"contracts", "budget"}
	tests := []struct {
		name     string
		files    map[string]string
		environ  []string
		set      map[string]any
		wantText []string
	}{
		{name: "typo of a top-level key", files: map[string]string{"config.yaml": "htp:\n  address: \":1\"\n"},
			wantText: []string{"htp"}},
		{name: "unknown key inside a known section", files: map[string]string{"config.yaml": "http:\n  adress: \":1\"\n"},
			wantText: []string{"adress"}},
		{name: "unknown key in business", files: map[string]string{"config.yaml": "business:\n  workingDay: [Mon]\n"},
			wantText: []string{"workingday"}},
		{name: "unknown key in env file", files: map[string]string{"config.development.yaml": "databse:\n  driver: sqlite\n"},
			wantText: []string{"databse"}},
		{name: "unknown module in file", files: map[string]string{"config.yaml": "modules:\n  ghost:\n    enabled: true\n"},
			wantText: []string{"modules.ghost", "ghost"}},
		{name: "unknown module in environment", environ: []string{"CONTRACTFLOW_MODULES_GHOST_ENABLED=false"},
			wantText: []string{"CONTRACTFLOW_MODULES_GHOST_ENABLED", "ghost"}},
		{name: "unknown module via Set", set: map[string]any{"modules.ghost.enabled": false},
			wantText: []string{"modules.ghost"}},
		{name: "unknown key under a known module", files: map[string]string{"config.yaml": "modules:\n  budget:\n    enabld: false\n"},
			wantText: []string{"enabld"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			environ := append([]string{}, tc.environ...)
			_, err := config.Load(config.Options{Dir: writeDir(t, tc.files), Environ: environ, Modules: modules, Set: tc.set})
			require.Error(t, err)
			for _, s := range tc.wantText {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestLoadModuleToggles(t *testing.T) {
	modules := []string{"contracts", "budget", "reports"}
	tests := []struct {
		name    string
		file    string
		environ []string
		want    map[string]bool
	}{
		{name: "all enabled by default", want: map[string]bool{"contracts": true, "budget": true, "reports": true}},
		{name: "off in file", file: "modules:\n  budget:\n    enabled: false\n",
			want: map[string]bool{"contracts": true, "budget": false, "reports": true}},
		{name: "off in environment", environ: []string{"CONTRACTFLOW_MODULES_REPORTS_ENABLED=false"},
			want: map[string]bool{"contracts": true, "budget": true, "reports": false}},
		{name: "environment turns a file's off back on",
			file:    "modules:\n  budget:\n    enabled: false\n",
			environ: []string{"CONTRACTFLOW_MODULES_BUDGET_ENABLED=true"},
			want:    map[string]bool{"contracts": true, "budget": true, "reports": true}},
		{name: "name is case-insensitive", file: "modules:\n  Budget:\n    enabled: false\n",
			want: map[string]bool{"contracts": true, "budget": false, "Budget": false, "reports": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != "" {
				files["config.yaml"] = tc.file
			}
			environ := append([]string{}, tc.environ...)
			cfg, err := config.Load(config.Options{Dir: writeDir(t, files), Environ: environ, Modules: modules})
			require.NoError(t, err)
			for name, want := range tc.want {
				assert.Equal(t, want, cfg.ModuleEnabled(name), "module %s", name)
			}
		})
	}
}

func TestLoadJWTSecretInProduction(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		secret  string
		wantErr bool
	}{
		{name: "production refuses the default", env: "production", secret: config.DefaultJWTSecret, wantErr: true},
		{name: "production refuses 31 bytes", env: "production", secret: strings.Repeat("s", 31), wantErr: true},
		{name: "production refuses empty", env: "production", secret: "", wantErr: true},
		{name: "production accepts 32 bytes", env: "production", secret: strings.Repeat("s", 32)},
		{name: "production accepts 64 bytes", env: "production", secret: strings.Repeat("s", 64)},
		{name: "production refuses the example", env: "production", secret: config.ExampleJWTSecret, wantErr: true},
		{name: "development accepts the default", env: "development", secret: config.DefaultJWTSecret},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			environ := []string{"CONTRACTFLOW_APP_ENV=" + tc.env, "CONTRACTFLOW_JWT_SECRET=" + tc.secret}
			cfg, err := config.Load(config.Options{Environ: environ})
			if tc.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "jwt.secret")
				assert.Contains(t, err.Error(), "set CONTRACTFLOW_JWT_SECRET", "says what to set")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.secret, cfg.JWT.Secret)
		})
	}
}

// widgetsSection is a module's own configuration section, pre-filled with
// its defaults the way a Configurer hands it to the kernel.
type widgetsSection struct {
	Limit   int           `mapstructure:"limit"`
	Every   time.Duration `mapstructure:"every"`
	Label   string        `mapstructure:"label"`
	Lockout struct {
		MaxFailedAttempts int `mapstructure:"maxFailedAttempts"`
	} `mapstructure:"lockout"`
}

func newWidgetsSection() *widgetsSection {
	s := &widgetsSection{Limit: 3, Every: time.Minute, Label: "default"}
	s.Lockout.MaxFailedAttempts = 5
	return s
}

func TestLoadModuleSection(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		environ []string
		set     map[string]any
		want    func() *widgetsSection
		wantErr string
	}{
		{name: "defaults", want: newWidgetsSection},
		{name: "file overrides one key", file: "widgets:\n  limit: 7\n", want: func() *widgetsSection {
			s := newWidgetsSection()
			s.Limit = 7
			return s
		}},
		{name: "file overrides a nested key", file: "widgets:\n  lockout:\n    maxFailedAttempts: 8\n", want: func() *widgetsSection {
			s := newWidgetsSection()
			s.Lockout.MaxFailedAttempts = 8
			return s
		}},
		{name: "environment overrides keys",
			file: "widgets:\n  limit: 7\n",
			environ: []string{
				"CONTRACTFLOW_WIDGETS_LIMIT=11",
				"CONTRACTFLOW_WIDGETS_EVERY=2m",
				"CONTRACTFLOW_WIDGETS_LOCKOUT_MAXFAILEDATTEMPTS=9",
			},
			want: func() *widgetsSection {
				s := newWidgetsSection()
				s.Limit, s.Every, s.Lockout.MaxFailedAttempts = 11, 2*time.Minute, 9
				return s
			}},
		{name: "Set overrides environment",
			environ: []string{"CONTRACTFLOW_WIDGETS_LABEL=env"},
			set:     map[string]any{"widgets.label": "set"},
			want: func() *widgetsSection {
				s := newWidgetsSection()
				s.Label = "set"
				return s
			}},
		{name: "unknown key in section", file: "widgets:\n  limt: 7\n", wantErr: "limt"},
		{name: "wrong type in section", environ: []string{"CONTRACTFLOW_WIDGETS_LIMIT=many"}, wantErr: "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != "" {
				files["config.yaml"] = tc.file
			}
			section := newWidgetsSection()
			environ := append([]string{}, tc.environ...)
			_, err := config.Load(config.Options{
				Dir: writeDir(t, files), Environ: environ, Set: tc.set,
				Modules:  []string{"widgets"},
				Sections: map[string]any{"widgets": section},
			})
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "widgets")
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want(), section)
		})
	}
}

func TestLoadIgnoresUnrelatedVariables(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
	}{
		{name: "test DSN", environ: []string{"CONTRACTFLOW_TEST_POSTGRES_DSN=postgres://x@y/z"}},
		{name: "config folder", environ: []string{"CONTRACTFLOW_CONFIG_DIR=/etc/contractflow"}},
		{name: "other prefixes", environ: []string{"HTTP_ADDRESS=:1", "contractflow_http_address=:2", "PATH=/bin"}},
		{name: "malformed entry", environ: []string{"CONTRACTFLOW_HTTP_ADDRESS"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(config.Options{Environ: tc.environ})
			require.NoError(t, err)
			assert.Equal(t, ":8080", cfg.HTTP.Address)
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{name: "malformed YAML", files: map[string]string{"config.yaml": "http: [\n"}, want: "config.yaml"},
		{name: "malformed env file", files: map[string]string{"config.development.yaml": "http:\n\taddress: x\n"}, want: "config.development.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load(config.Options{Dir: writeDir(t, tc.files), Environ: []string{}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestLoadMistakesAreLoud checks that each configuration mistake is an
// error naming the variable or the file and line, the key, the nearest
// known key and what the key expects.
func TestLoadMistakesAreLoud(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		environ  []string
		wantText []string
	}{
		{name: "misspelt variable", environ: []string{"CONTRACTFLOW_SERVR_PORT=9999"},
			wantText: []string{"CONTRACTFLOW_SERVR_PORT", "names no configuration key"}},
		{name: "misspelt variable of a known section", environ: []string{"CONTRACTFLOW_HTTP_ADRESS=:1"},
			wantText: []string{"CONTRACTFLOW_HTTP_ADRESS", "did you mean CONTRACTFLOW_HTTP_ADDRESS (key http.address)?"}},
		{name: "unknown key in a file names file, line and nearest key",
			files:    map[string]string{"config.yaml": "app:\n  env: development\nhttp:\n  address: \":1\"\n  adress: \":2\"\n"},
			wantText: []string{"unknown key http.adress", "config.yaml:5", "did you mean http.address?"}},
		{name: "unknown section in the environment file",
			files:    map[string]string{"config.development.yaml": "\ndatabse:\n  driver: sqlite\n"},
			wantText: []string{"unknown key databse", "config.development.yaml:2", "did you mean database"}},
		{name: "wrong type in a file names file, line, key and expectation",
			files:    map[string]string{"config.yaml": "http:\n  maxBodyBytes: lots\n"},
			wantText: []string{"http.maxBodyBytes", "config.yaml:2", "expected a whole number", "lots"}},
		{name: "wrong duration in a variable",
			environ:  []string{"CONTRACTFLOW_HTTP_SHUTDOWNTIMEOUT=soon"},
			wantText: []string{"http.shutdownTimeout", "variable CONTRACTFLOW_HTTP_SHUTDOWNTIMEOUT", "soon"}},
		{name: "wrong boolean in a variable",
			environ:  []string{"CONTRACTFLOW_RATELIMIT_ENABLED=maybe"},
			wantText: []string{"rateLimit.enabled", "CONTRACTFLOW_RATELIMIT_ENABLED", "true or false"}},
		{name: "invalid value in a file names file and line",
			files:    map[string]string{"config.yaml": "database:\n  driver: oracle\n"},
			wantText: []string{"database.driver", "config.yaml:2", "must be sqlite or postgres", "oracle"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load(config.Options{Dir: writeDir(t, tc.files), Environ: append([]string{}, tc.environ...)})
			require.Error(t, err)
			for _, s := range tc.wantText {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestLoadReservedVariables(t *testing.T) {
	cfg, err := config.Load(config.Options{Environ: []string{
		"CONTRACTFLOW_TEST_ANYTHING=1", "CONTRACTFLOW_CONFIG_DIR=/etc/contractflow",
		"CONTRACTFLOW_ALLOWEDORIGINS=https://a.example.com, https://b.example.com",
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{"https://a.example.com", "https://b.example.com"}, cfg.AllowedOrigins, "list keys split on commas")
}

func TestSettingsSourcesAndMasking(t *testing.T) {
	dir := writeDir(t, map[string]string{"config.yaml": "http:\n  address: \":9000\"\ndatabase:\n  driver: postgres\n  dsn: postgres://cf:hunter2@db:5432/cf\n"})
	cfg, err := config.Load(config.Options{Dir: dir, Environ: []string{"CONTRACTFLOW_JWT_SECRET=0123456789abcdef0123456789abcdef"}})
	require.NoError(t, err)
	got := map[string]config.Setting{}
	for _, s := range cfg.Settings() {
		got[s.Key] = s
	}
	assert.Equal(t, config.FromDefault, got["rateLimit.globalperminute"].Source.Origin+got["ratelimit.globalperminute"].Source.Origin)
	assert.Equal(t, "300", got["ratelimit.globalperminute"].Value)
	assert.Equal(t, ":9000", got["http.address"].Value)
	assert.Equal(t, "file "+filepath.Join(dir, "config.yaml")+":2", got["http.address"].Source.String())
	assert.Equal(t, "variable CONTRACTFLOW_JWT_SECRET", got["jwt.secret"].Source.String())
	assert.Equal(t, "******", got["jwt.secret"].Value)
	assert.Equal(t, "******", got["seed.adminpassword"].Value)
	assert.Equal(t, "postgres://cf:******@db:5432/cf", got["database.dsn"].Value)
	for _, s := range cfg.Settings() {
		assert.NotContains(t, s.Value, "hunter2")
		assert.NotContains(t, s.Value, "0123456789abcdef")
	}
}

func TestLoadProductionRefusesPublishedDatabasePasswords(t *testing.T) {
	secret := "CONTRACTFLOW_JWT_SECRET=" + strings.Repeat("k", 40)
	tests := []struct {
		name    string
		env     string
		dsn     string
		wantErr bool
	}{
		{name: "compose file's default in a URL", env: "production", dsn: "postgres://contractflow:contractflow@db:5432/contractflow?sslmode=disable", wantErr: true},
		{name: "example's password", env: "production", dsn: "postgres://contractflow:secret@db:5432/contractflow", wantErr: true},
		{name: "key=value form", env: "production", dsn: "host=db user=contractflow password=contractflow dbname=cf", wantErr: true},
		{name: "own password", env: "production", dsn: "postgres://contractflow:Xk29-long-random@db:5432/contractflow"},
		{name: "development accepts it", env: "development", dsn: "postgres://contractflow:contractflow@db:5432/contractflow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load(config.Options{Environ: []string{"CONTRACTFLOW_APP_ENV=" + tc.env, secret,
				"CONTRACTFLOW_DATABASE_DRIVER=postgres", "CONTRACTFLOW_DATABASE_DSN=" + tc.dsn}})
			if !tc.wantErr {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "database.dsn")
			assert.Contains(t, err.Error(), "CONTRACTFLOW_DATABASE_DSN", "says what to set")
			assert.NotContains(t, err.Error(), "Xk29")
		})
	}
}
