package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/contractflow/contractflow/platform/kernel"
)

// sizes of the data set (issue 8 step 2).
type sizes struct {
	Users, Suppliers, Projects, Departments, Contracts int
	Evaluations                                        int // purchase evaluations (issue 15)
}

// benchPassword is every demo user's password (seed --demo-password).
const benchPassword = "Bench-Passw0rd-2026"

const (
	adminEmail    = "admin@contractflow.local"
	adminPassword = "ChangeMe-Admin-2026"
)

// searchWord occurs in about one title in sixteen (one of the 16 work
// items the demo titles are made of).
const searchWord = "móng"

// titleItems name what the created contracts and evaluations are about.
var titleItems = kernel.DemoWorkItems

// dataset is what the load produced and the scenarios use, read back from
// the database after the modules' seed steps wrote it (dataset.go).
type dataset struct {
	sizes
	Approvals, Comments int
	ByPhase             map[string]int
	LiveIDs             []string // every live contract (detail)
	PoolHTTP, PoolRaw   []string // live contracts in the initial phase with a future deadline, split
	LoginEmails         []string // every demo user (benchPassword)
	DrafterEmails       []string
	FinanceEmail        string
	ExportPhase         string
	ExportRows          int      // live contracts in ExportPhase
	RawActorID          string   // approver of the raw transaction's moves
	SupplierIDs         []string // every supplier (contract create)
	ProjectIDs          []string // every project (contract create)
	SeedTime            time.Duration
	Proc                *procData // evaluations and budgets (evaluations.go)
	Graph               *graph    // the contract workflow, read from the engine
	NextPhase           string    // the initial phase's normal move (the transition scenario)
}

// seedDemo loads the data set with the built binary, as an operator would:
// `contractflow seed --demo-size N …` on the run's database, where each
// module writes its own part in its own tables (kernel.DemoSeeder). The
// server is stopped meanwhile.
func seedDemo(ctx context.Context, srv *server, sz sizes) error {
	args := []string{"seed", "--demo-size", strconv.Itoa(sz.Contracts), "--demo-users", strconv.Itoa(sz.Users),
		"--demo-suppliers", strconv.Itoa(sz.Suppliers), "--demo-projects", strconv.Itoa(sz.Projects),
		"--demo-departments", strconv.Itoa(sz.Departments), "--demo-password", benchPassword}
	if sz.Evaluations > 0 {
		args = append(args, "--demo-evaluations", strconv.Itoa(sz.Evaluations))
	} else {
		args = append(args, "--no-demo-evaluations")
	}
	cmd := exec.CommandContext(ctx, srv.bin, args...)
	cmd.Dir = srv.workDir
	cmd.Env = srv.env("127.0.0.1:0")
	logf, err := os.OpenFile(srv.workDir+"/seed.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("contractflow %v: %w\n%s", args, err, tail(srv.workDir+"/seed.log", 20))
	}
	return nil
}

// load runs the modules' seed steps and reads back what the scenarios need.
func load(ctx context.Context, srv *server, d *database, sz sizes, g *graph, evalGraphs map[string]*graph) (*dataset, error) {
	t0 := time.Now()
	if err := seedDemo(ctx, srv, sz); err != nil {
		return nil, err
	}
	seeded := time.Since(t0)
	ds, err := readDataset(ctx, d, sz, g, evalGraphs)
	if err != nil {
		return nil, fmt.Errorf("read the data set: %w", err)
	}
	ds.SeedTime = seeded
	return ds, nil
}

// shuffle orders ids the same way on every run (the pools' order).
func shuffle(ids []string, stream uint64) {
	r := rand.New(rand.NewPCG(2026, stream))
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
}

// fetchGraphs reads the contract workflow and the evaluation policies'
// from the engine.
func fetchGraphs(ctx context.Context, c *client) (*graph, map[string]*graph, error) {
	g, err := fetchGraph(ctx, c, "contract.")
	if err != nil {
		return nil, nil, fmt.Errorf("contract workflow: %w", err)
	}
	evals := map[string]*graph{}
	for _, policy := range []string{"A", "B"} {
		if evals[policy], err = fetchGraph(ctx, c, "purchaseEvaluation."+policy); err != nil {
			return nil, nil, fmt.Errorf("evaluation workflow %s: %w", policy, err)
		}
	}
	return g, evals, nil
}
