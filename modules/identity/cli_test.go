package identity_test

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/cli"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// The operator's way back into a locked-out administrator account:
// contractflow user reset-password --email X.
func TestResetPasswordCommand(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		set := testkit.FreshDatabase(t, driver)
		app := start(t, driver, testkit.WithConfig("database.driver", set["database.driver"]), testkit.WithConfig("database.dsn", set["database.dsn"]))
		settings := map[string]any{
			"identity.password.hash.memoryKiB":  64,
			"identity.password.hash.iterations": 1,
			"log.dir":                           "",
		}
		for k, v := range set {
			settings[k] = v
		}
		run := func(args ...string) (string, error) {
			var out bytes.Buffer
			err := cli.Run(context.Background(), kernel.Options{Set: settings, Environ: []string{}, LogOutput: io.Discard,
				Modules: []kernel.Factory{func() kernel.Module { return identity.New() }}}, args, &out)
			return out.String(), err
		}

		// Lock the administrator out and keep a sign-in to see it revoked.
		before := signIn(t, app, identitytest.AdminEmail, identitytest.AdminPassword)
		for range 5 {
			expect(t, login(app, identitytest.AdminEmail, "Forgotten-Password-1"), 400, "invalid_credentials")
		}
		expect(t, login(app, identitytest.AdminEmail, identitytest.AdminPassword), 400, "account_locked")

		out, err := run("user", "reset-password", "--email", " ADMIN@contractflow.local ")
		if err != nil {
			t.Fatalf("reset-password: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`new password for .*: (\S+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("output does not show the generated password:\n%s", out)
		}
		if len(m[1]) < 12 {
			t.Errorf("generated password %q is short", m[1])
		}
		signIn(t, app, identitytest.AdminEmail, m[1])
		expect(t, login(app, identitytest.AdminEmail, identitytest.AdminPassword), 400, "invalid_credentials")
		expect(t, get(app, "/api/auth/me", before.AccessToken), 401, "token_invalid")
		expect(t, refresh(app, before.RefreshToken), 401, "token_invalid")

		// A chosen password is not printed.
		out, err = run("user", "reset-password", "--email", identitytest.AdminEmail, "--password", "Operator-Chosen-1")
		if err != nil || strings.Contains(out, "Operator-Chosen-1") {
			t.Errorf("reset with --password: err %v, output %q", err, out)
		}
		signIn(t, app, identitytest.AdminEmail, "Operator-Chosen-1")

		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"unknown email", []string{"user", "reset-password", "--email", "nobody@contractflow.local"}, "no user has the email"},
			{"missing --email", []string{"user", "reset-password"}, "--email is required"},
			{"short password", []string{"user", "reset-password", "--email", identitytest.AdminEmail, "--password", "short"}, "characters"},
			{"unknown flag", []string{"user", "reset-password", "--mail", identitytest.AdminEmail}, "not defined: -mail"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out, err := run(tc.args...)
				if err == nil || !strings.Contains(err.Error()+out, tc.want) {
					t.Errorf("error %v, output %q; want an error mentioning %q", err, out, tc.want)
				}
			})
		}
		// The refused commands changed nothing.
		signIn(t, app, identitytest.AdminEmail, "Operator-Chosen-1")
	})
}
