package contracts_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

// cpuTime is this process's user + system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchEnv is an instance on SQLite whose DangDamPhan inbox (Drafter,
// DeptManager) is held by holders users besides the drafter.
func benchEnv(b *testing.B, holders int) (*env, user) {
	b.Helper()
	app := identitytest.Start(b, "sqlite", testkit.WithClock(clock.NewManual(t0)),
		testkit.WithConfig("jwt.accessTokenMinutes", 60*24*365), testkit.WithConfig("rateLimit.enabled", false),
		testkit.WithConfig("modules.forms.enabled", false))
	e := &env{app: app, driver: "sqlite", admin: identitytest.AdminToken(b, app)}
	e.supplier = e.masterdata(b, "/api/suppliers", map[string]any{"code": "NCC001", "name": "Công ty Vật tư A", "supplierType": "Material"})
	e.project = e.masterdata(b, "/api/projects", map[string]any{"code": "DA001", "name": "Dự án Một"})
	for i := range holders {
		role := "Drafter"
		if i%2 == 1 {
			role = "DeptManager"
		}
		if st, body, err := e.raw("POST", "/api/users", e.admin, map[string]any{"email": fmt.Sprintf("holder%d@test.local", i),
			"fullName": fmt.Sprintf("Holder %d", i), "password": identitytest.Password, "roles": []string{role}}); err != nil || st != 201 {
			b.Fatalf("create holder: %d %s %v", st, body, err)
		}
	}
	return e, e.user(b, "Drafter")
}

// report sets cpu-ms/op from the process CPU time since from: the figure
// to compare on a shared machine, where ns/op waits for the CPU.
func report(b *testing.B, from time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-from)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkCreate drafts contracts through the HTTP handler in process.
func BenchmarkCreate(b *testing.B) {
	e, drafter := benchEnv(b, 0)
	body := e.body(nil)
	b.ResetTimer()
	from := cpuTime(b)
	for range b.N {
		if st, out, err := e.raw("POST", "/api/contracts", drafter.token, body); err != nil || st != 201 {
			b.Fatalf("create: %d %s %v", st, out, err)
		}
	}
	report(b, from)
}

// BenchmarkTransition moves distinct contracts DangSoanThao → DangDamPhan
// as their drafter, with 200 other users in the next phase's inbox (each
// move notifies them all).
func BenchmarkTransition(b *testing.B) {
	e, drafter := benchEnv(b, 200)
	ids := make([]string, b.N)
	for i := range ids {
		st, out, err := e.raw("POST", "/api/contracts", drafter.token, e.body(nil))
		if err != nil || st != 201 {
			b.Fatalf("create: %d %s %v", st, out, err)
		}
		ids[i] = string(out[strings.Index(string(out), `"id":"`)+6:][:36])
	}
	body := map[string]any{"toPhase": "DangDamPhan"}
	b.ResetTimer()
	from := cpuTime(b)
	for _, id := range ids {
		if st, out, err := e.raw("POST", "/api/contracts/"+id+"/transitions", drafter.token, body); err != nil || st != 200 {
			b.Fatalf("move: %d %s %v", st, out, err)
		}
	}
	report(b, from)
}
