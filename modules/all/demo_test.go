package all_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/cli"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// demoTables are the tables the bulk demo steps fill.
var demoTables = []string{"users", "user_roles", "suppliers", "projects", "departments", "contracts", "contract_approvals",
	"contract_comments", "contract_code_sequences", "purchase_evaluations", "purchase_evaluation_quotations",
	"purchase_evaluation_history", "pe_dept_opinions", "purchase_evaluation_code_sequences", "budgets", "budget_lines"}

// TestDemoSeed loads a small bulk demo data set with `contractflow seed
// --demo-size` and checks what the modules promise of it: every history
// chain verifies, the workflow counters equal a recount, the search index
// finds what the titles hold, a demo user signs in with the demo password,
// a second run adds nothing and another database gets the same data from
// the same seed.
func TestDemoSeed(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		load := func() kernel.Options {
			set := testkit.Isolated(t, driver)
			set["seed.demo"] = false
			set["identity.password.hash.memoryKiB"] = 64
			set["identity.password.hash.iterations"] = 1
			opts := kernel.Options{Set: set, Environ: []string{}, LogOutput: io.Discard}
			runCLI(t, opts, "seed", "--demo-size", "600", "--demo-evaluations", "200", "--demo-password", identitytest.Password)
			return opts
		}
		opts := load()
		first := demoSnapshot(t, opts)
		require.NotZero(t, first.counts["contracts"])
		require.NotZero(t, first.counts["purchase_evaluation_history"])
		require.NotZero(t, first.counts["budget_lines"])

		assert.Contains(t, runCLI(t, opts, "audit", "verify"), "every chain holds")
		assert.Equal(t, first.recount, first.counters, "workflow counters against a recount of the live documents")

		t.Run("a second run adds nothing", func(t *testing.T) {
			runCLI(t, opts, "seed", "--demo-size", "600", "--demo-evaluations", "200", "--demo-password", identitytest.Password)
			again := demoSnapshot(t, opts)
			assert.Equal(t, first.counts, again.counts)
			assert.Equal(t, first.digest, again.digest)
		})
		t.Run("the same seed gives the same data", func(t *testing.T) {
			other := demoSnapshot(t, load())
			assert.Equal(t, first.counts, other.counts)
			assert.Equal(t, first.digest, other.digest)
		})
		t.Run("the service reads it", func(t *testing.T) {
			app := identitytest.Start(t, driver, testkit.WithConfig("database.driver", opts.Set["database.driver"]),
				testkit.WithConfig("database.dsn", opts.Set["database.dsn"]))
			token := identitytest.Login(t, app, identity.DemoEmail("Finance", 0), identitytest.Password)
			r := app.Do(testkit.Request{Method: "GET", Path: "/api/contracts?pageSize=1&search=" + url.QueryEscape("móng"), Token: identitytest.AdminToken(t, app)})
			require.Equal(t, 200, r.Status, string(r.Body))
			var page struct{ TotalCount int }
			r.JSON(t, &page)
			assert.Equal(t, first.titlesWithMong, page.TotalCount, "search matches against the titles")
			r = app.Do(testkit.Request{Method: "GET", Path: "/api/contracts/inbox?pageSize=1", Token: token})
			require.Equal(t, 200, r.Status, string(r.Body))
			r.JSON(t, &page)
			assert.NotZero(t, page.TotalCount, "the Finance inbox")
		})
	})
}

func runCLI(t *testing.T, opts kernel.Options, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, cli.Run(context.Background(), opts, args, &out), "contractflow %s: %s", strings.Join(args, " "), out.String())
	return out.String()
}

type demoState struct {
	counts            map[string]int64
	digest            string // contracts, evaluations and budgets, without master-data ids and times (relative to the load)
	counters, recount map[string]int64
	titlesWithMong    int
}

func demoSnapshot(t *testing.T, opts kernel.Options) demoState {
	t.Helper()
	ctx := context.Background()
	k, err := kernel.New(opts)
	require.NoError(t, err)
	defer k.Close(ctx)
	conn := k.App().DB.Conn(ctx)
	st := demoState{counts: map[string]int64{}, counters: map[string]int64{}, recount: map[string]int64{}}
	for _, table := range demoTables {
		var n int64
		require.NoError(t, conn.Table(table).Count(&n).Error)
		st.counts[table] = n
	}
	h := sha256.New()
	for _, q := range []string{
		`SELECT id, title, phase, value, COALESCE(ma_hop_dong, ''), drafter_id FROM contracts ORDER BY id`,
		`SELECT id, ma_phieu, phase, estimated_value, title FROM purchase_evaluations ORDER BY id`,
		`SELECT id, code, planned_total FROM budgets ORDER BY id`,
	} {
		rows, err := conn.Raw(q).Rows()
		require.NoError(t, err)
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			require.NoError(t, rows.Scan(ptrs...))
			fmt.Fprintln(h, vals...)
		}
		require.NoError(t, rows.Close())
	}
	st.digest = fmt.Sprintf("%x", h.Sum(nil))
	var counts []struct {
		Kind, Phase string
		N           int64
	}
	require.NoError(t, conn.Raw(`SELECT kind, phase, SUM(n) AS n FROM workflow_counts GROUP BY kind, phase HAVING SUM(n) <> 0`).Scan(&counts).Error)
	for _, c := range counts {
		st.counters[c.Kind+" "+c.Phase] = c.N
	}
	for kind, table := range map[string]string{"contract": "contracts", "purchaseEvaluation": "purchase_evaluations"} {
		counts = nil
		require.NoError(t, conn.Raw(`SELECT phase, COUNT(*) AS n FROM `+table+` WHERE deleted_at IS NULL GROUP BY phase`).Scan(&counts).Error)
		for _, c := range counts {
			st.recount[kind+" "+c.Phase] = c.N
		}
	}
	var titles []string
	require.NoError(t, conn.Raw(`SELECT title FROM contracts WHERE deleted_at IS NULL`).Scan(&titles).Error)
	for _, title := range titles {
		if strings.Contains(title, "móng") {
			st.titlesWithMong++
		}
	}
	return st
}
