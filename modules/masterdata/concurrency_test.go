package masterdata_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

// race sends the requests at once and returns the statuses and problem codes.
func race(t *testing.T, app *testkit.App, reqs []testkit.Request) (map[int]int, map[string]int) {
	t.Helper()
	statuses, codes := map[int]int{}, map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for _, req := range reqs {
		wg.Go(func() {
			<-ready
			r := app.Do(req)
			var p struct{ Code string }
			if r.Status >= 400 {
				_ = json.Unmarshal(r.Body, &p)
			}
			mu.Lock()
			statuses[r.Status]++
			if p.Code != "" {
				codes[p.Code]++
			}
			mu.Unlock()
		})
	}
	close(ready)
	wg.Wait()
	return statuses, codes
}

// The database, not a check before the insert, keeps codes unique: of
// concurrent creates of one code exactly one wins, the others get 409.
func TestConcurrentCreateOfOneCode(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		const n = 6
		for round := range 3 {
			k := kinds[round%len(kinds)]
			code := newCode("RACE-")
			reqs := make([]testkit.Request, n)
			for i := range reqs {
				reqs[i] = testkit.Request{Method: "POST", Path: k.path, Token: admin, Body: k.body(code)}
			}
			statuses, codes := race(t, app, reqs)
			if statuses[201] != 1 || statuses[409] != n-1 || codes["duplicate_code"] != n-1 {
				t.Errorf("%s %s: statuses %v, codes %v; want one 201 and %d × 409 duplicate_code", k.name, code, statuses, codes, n-1)
			}
			if p := list(t, app, admin, k.path+"?search="+code); p.TotalCount != 1 {
				t.Errorf("%s %s: %d records", k.name, code, p.TotalCount)
			}
		}
	})
}

// Of concurrent updates that read the same version exactly one applies.
func TestConcurrentUpdatesOfOneVersion(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		const n = 6
		k := kinds[0]
		code := newCode("CAS-")
		rec := create(t, app, admin, k.path, k.body(code))
		reqs := make([]testkit.Request, n)
		for i := range reqs {
			reqs[i] = testkit.Request{Method: "PUT", Path: k.path + "/" + rec["id"].(string), Token: admin,
				Body: with(k.body(code), "version", 1, "name", fmt.Sprintf("Editor %d", i))}
		}
		statuses, codes := race(t, app, reqs)
		if statuses[200] != 1 || codes["stale_version"] != n-1 {
			t.Errorf("statuses %v, codes %v; want one 200 and %d × 409 stale_version", statuses, codes, n-1)
		}
		if got := get(t, app, admin, k.path+"/"+rec["id"].(string)); got["version"] != 2.0 {
			t.Errorf("version %v after one applied update, want 2", got["version"])
		}
	})
}
