package identity_test

import (
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/lowprio/lowpriotest"
	"github.com/contractflow/contractflow/platform/testkit"
)

// With identity.hashIsolation: process (the default) a login's hash runs in
// a child process, every thread of which has nice 19: the child reads the
// login's request. With inline it runs in the service: a child left by an
// earlier start reads nothing. Nothing runs in parallel, so that no other
// test's login reaches the child meanwhile.
func TestLoginHashRunsInALowPriorityChild(t *testing.T) {
	const worker = "identity-argon2id"
	for _, driver := range testkit.Drivers() {
		for _, tc := range []struct {
			isolation string
			inChild   bool
		}{{"process", true}, {"inline", false}} {
			t.Run(driver+"/"+tc.isolation, func(t *testing.T) {
				app := start(t, driver, testkit.WithConfig("identity.hashIsolation", tc.isolation))
				identitytest.AdminToken(t, app) // a child, if any, is running now
				pid := lowpriotest.Child(t, worker)
				if pid == 0 {
					if tc.inChild {
						t.Fatalf("no child serves %s after a login", worker)
					}
					return
				}
				read := lowpriotest.BytesRead(t, pid)
				identitytest.AdminToken(t, app)
				if grew := lowpriotest.BytesRead(t, pid) > read; grew != tc.inChild {
					t.Fatalf("the child read the login's request: %v, want %v", grew, tc.inChild)
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
