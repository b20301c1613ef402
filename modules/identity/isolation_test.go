package identity_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/lowprio/lowpriotest"
	"github.com/contractflow/contractflow/platform/testkit"
)

// With identity.hashIsolation: process (the default) a login's hash runs in
// a child process, every thread of which has nice 19: the child reads the
// login's request. With inline it runs in the service and no login starts
// a child. A child left by an earlier start is ended first: it retires by
// itself after its idle time, and what it reads while exiting showed as a
// read during the login. Nothing runs in parallel, so that no other test's
// login reaches the child meanwhile.
func TestLoginHashRunsInALowPriorityChild(t *testing.T) {
	const worker = "identity-argon2id"
	for _, driver := range testkit.Drivers() {
		for _, tc := range []struct {
			isolation string
			inChild   bool
		}{{"process", true}, {"inline", false}} {
			t.Run(driver+"/"+tc.isolation, func(t *testing.T) {
				app := start(t, driver, testkit.WithConfig("identity.hashIsolation", tc.isolation))
				if !tc.inChild {
					endChild(t, worker)
					identitytest.AdminToken(t, app)
					if pid := lowpriotest.Child(t, worker); pid != 0 {
						t.Fatalf("a login with hashIsolation inline started child %d", pid)
					}
					return
				}
				identitytest.AdminToken(t, app) // the child is running now
				pid := lowpriotest.Child(t, worker)
				if pid == 0 {
					t.Fatalf("no child serves %s after a login", worker)
				}
				read := lowpriotest.BytesRead(t, pid)
				identitytest.AdminToken(t, app)
				if lowpriotest.BytesRead(t, pid) <= read {
					t.Fatalf("the child read nothing of the login's request")
				}
				if now := lowpriotest.Child(t, worker); now != pid {
					t.Fatalf("the child changed from %d to %d during the login", pid, now)
				}
				for tid, nice := range lowpriotest.Niceness(t, pid) {
					if nice != 19 {
						t.Errorf("thread %d of the hashing child runs at nice %d, want 19", tid, nice)
					}
				}
			})
		}
	}
}

// endChild kills the hashing child of an earlier start, if there is one,
// and waits until it is gone.
func endChild(t *testing.T, worker string) {
	t.Helper()
	pid := lowpriotest.Child(t, worker)
	if pid == 0 {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		t.Fatalf("kill child %d: %v", pid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); lowpriotest.Child(t, worker) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d of %s still there 10 s after SIGKILL", pid, worker)
		}
	}
}
