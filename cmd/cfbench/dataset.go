package main

// The one place cfbench knows the modules' tables: the queries that read
// the seeded data set back (who signs in, which documents each scenario
// may move) and the statements of the raw limits (raw.go,
// evaluations.go), which measure the database itself. The data set is
// written by the modules (contractflow seed --demo-size), never here.

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/contractflow/contractflow/modules/contracts"
)

// The statements of the raw transactions: the compare-and-set and history
// row a move writes, as the workflow runtime writes them.
const (
	sqlRawContractMove = `UPDATE contracts SET phase = ?, sla_deadline = ?, sla_warning_sent = ?, updated_at = ?,
		updated_by = ?, version = version + 1 WHERE id = ? AND phase = ? AND deleted_at IS NULL`
	sqlRawContractApproval = `INSERT INTO contract_approvals (id, contract_id, from_phase, to_phase, approver_user_id,
		decision, comment, approved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlRawEvaluationMove = `UPDATE purchase_evaluations SET phase = ?, sla_deadline = ?, sla_warning_sent = ?,
		sla_reminded_at = NULL, history_hash = ?, updated_at = ?, updated_by = ?, version = version + 1
		WHERE id = ? AND phase = ? AND history_hash = ? AND deleted_at IS NULL`
	sqlRawEvaluationHistory = `INSERT INTO purchase_evaluation_history (id, evaluation_id, from_phase, to_phase,
		approver_user_id, decision, comment, approved_at, hash, prev_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// sqlHistoryHead is an evaluation's chain head before the raw moves.
	sqlHistoryHead = `SELECT history_hash FROM purchase_evaluations WHERE id = ?`
)

// The data set's reads.
const (
	sqlDemoUsers = `SELECT u.id, u.normalized_email, r.name FROM users u JOIN user_roles ur ON ur.user_id = u.id
		JOIN roles r ON r.id = ur.role_id WHERE u.normalized_email LIKE '%@demo.contractflow.local' ORDER BY u.normalized_email`
	sqlSuppliers   = `SELECT id FROM suppliers WHERE deleted_at IS NULL ORDER BY code`
	sqlProjects    = `SELECT id FROM projects WHERE deleted_at IS NULL ORDER BY code`
	sqlDepartments = `SELECT id FROM departments WHERE deleted_at IS NULL ORDER BY code`
	// sqlContracts lists every contract in id (creation) order.
	sqlContracts = `SELECT id, phase, deleted_at IS NULL, sla_deadline, budget_line_id IS NOT NULL, project_id IS NOT NULL
		FROM contracts ORDER BY id`
	sqlApprovals   = `SELECT COUNT(*) FROM contract_approvals`
	sqlComments    = `SELECT COUNT(*) FROM contract_comments`
	sqlEvaluations = `SELECT id, policy, phase, sla_deadline, selected_quotation_id IS NOT NULL FROM purchase_evaluations
		WHERE deleted_at IS NULL ORDER BY id`
	sqlQuotations = `SELECT COUNT(*) FROM purchase_evaluation_quotations`
	sqlHistory    = `SELECT COUNT(*) FROM purchase_evaluation_history`
	sqlOpinions   = `SELECT COUNT(*) FROM pe_dept_opinions`
	// sqlBudgetLines counts the live contracts naming each line of an
	// Approved budget.
	sqlBudgetLines = `SELECT l.id, COUNT(c.id) FROM budget_lines l JOIN budgets b ON b.id = l.budget_id
		JOIN contracts c ON c.budget_line_id = l.id AND c.deleted_at IS NULL
		WHERE b.status = 'Approved' AND b.deleted_at IS NULL AND l.deleted_at IS NULL GROUP BY l.id ORDER BY l.id`
	sqlBudgets = `SELECT COUNT(DISTINCT l.budget_id) FROM budget_lines l JOIN contracts c ON c.budget_line_id = l.id`
	// sqlBudgetCheck is a line's reserved amount against its open
	// reservations and the values of its contracts now in DangTrinhKy.
	sqlBudgetCheck = `SELECT l.reserved_amount, l.remaining, l.planned_amount,
		COALESCE((SELECT SUM(c.amount) FROM budget_commitments c WHERE c.budget_line_id = l.id AND c.closed_at IS NULL AND c.kind = 'Reserved'), 0),
		COALESCE((SELECT SUM(k.value) FROM contracts k WHERE k.budget_line_id = l.id AND k.phase = 'DangTrinhKy' AND k.deleted_at IS NULL), 0),
		(SELECT COUNT(*) FROM contracts k WHERE k.budget_line_id = l.id AND k.phase = 'DangTrinhKy' AND k.deleted_at IS NULL)
		FROM budget_lines l WHERE l.id = ?`
)

// ccmPhase is where CostControl checks a contract before signature (the
// budget scenarios' pools); sealPhase is where the contracts module gives a
// contract its code (the raw transaction stops before it).
const (
	ccmPhase  = contracts.DangKiemTraCCM
	sealPhase = contracts.DangDongDau
)

// readDataset reads back what the seed wrote.
func readDataset(ctx context.Context, d *database, sz sizes, g *graph, evalGraphs map[string]*graph) (*dataset, error) {
	db, err := d.open(1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ds := &dataset{sizes: sz, ByPhase: map[string]int{}, Graph: g, NextPhase: g.Normal[1]}
	// The list and the export filter on the Finance inbox's phase.
	if ds.ExportPhase = g.inboxPhase("Finance"); ds.ExportPhase == "" {
		ds.ExportPhase = g.Normal[min(2, len(g.Normal)-2)]
	}
	pd := &procData{ByPhase: map[string]int{}, Graphs: evalGraphs}
	ds.Proc = pd
	for _, policy := range []string{"A", "B"} {
		eg := evalGraphs[policy]
		for _, p := range append(slices.Clone(eg.Normal), eg.Reject) {
			if p != "" && !slices.Contains(pd.Phases, p) {
				pd.Phases = append(pd.Phases, p)
			}
		}
	}
	slices.SortStableFunc(pd.Phases, func(a, b string) int { return rank(evalGraphs, a) - rank(evalGraphs, b) })
	byRole := map[string][]user{}
	err = each(ctx, db, sqlDemoUsers, nil, func(rows *sql.Rows) error {
		var u user
		var role string
		if err := rows.Scan(&u.id, &u.email, &role); err != nil {
			return err
		}
		byRole[role] = append(byRole[role], u)
		ds.LoginEmails = append(ds.LoginEmails, u.email)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, role := range []string{"Drafter", "Finance", "Procurement", "ProjectManager", "CostControl"} {
		if len(byRole[role]) == 0 {
			return nil, fmt.Errorf("no demo user of role %s", role)
		}
	}
	emails := func(role string) (out []string) {
		for _, u := range byRole[role] {
			out = append(out, u.email)
		}
		return out
	}
	ds.DrafterEmails, ds.FinanceEmail, ds.RawActorID = emails("Drafter"), byRole["Finance"][0].email, byRole["Drafter"][0].id
	pd.ProcurementEmails, pd.PMEmails, pd.CCMEmails = emails("Procurement"), emails("ProjectManager"), emails("CostControl")
	pd.EvalActorID = byRole["ProjectManager"][0].id
	for q, dst := range map[string]*[]string{sqlSuppliers: &ds.SupplierIDs, sqlProjects: &ds.ProjectIDs, sqlDepartments: &pd.DepartmentIDs} {
		if *dst, err = column(ctx, db, q); err != nil {
			return nil, err
		}
	}
	pd.ProjectIDs = ds.ProjectIDs

	now := time.Now()
	var pool []string
	err = each(ctx, db, sqlContracts, nil, func(rows *sql.Rows) error {
		var id, phase string
		var live, withLine, withProject bool
		var deadline sql.NullTime
		if err := rows.Scan(&id, &phase, &live, &deadline, &withLine, &withProject); err != nil {
			return err
		}
		if !live {
			return nil
		}
		ds.LiveIDs = append(ds.LiveIDs, id)
		ds.ByPhase[phase]++
		switch {
		case phase == g.Initial && deadline.Valid && deadline.Time.After(now.Add(time.Hour)):
			pool = append(pool, id)
		case phase == ccmPhase && withLine:
			pd.LinePool = append(pd.LinePool, id)
		case phase == ccmPhase && withProject:
			pd.PlainPool = append(pd.PlainPool, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Two thirds of the pool for the HTTP transitions, the rest for the raw
	// transaction (which also walks its contracts further along the path).
	cut := len(pool) * 2 / 3
	ds.PoolHTTP, ds.PoolRaw = pool[:cut], pool[cut:]
	ds.ExportRows = ds.ByPhase[ds.ExportPhase]
	for q, dst := range map[string]*int{sqlApprovals: &ds.Approvals, sqlComments: &ds.Comments, sqlQuotations: &pd.Quotations,
		sqlHistory: &pd.History, sqlOpinions: &pd.Opinions, sqlBudgets: &pd.Budgets} {
		if err := db.QueryRowContext(ctx, q).Scan(dst); err != nil {
			return nil, err
		}
	}

	var evalPool []evalRef
	err = each(ctx, db, sqlEvaluations, nil, func(rows *sql.Rows) error {
		var e evalRef
		var phase string
		var deadline sql.NullTime
		var ready bool
		if err := rows.Scan(&e.id, &e.policy, &phase, &deadline, &ready); err != nil {
			return err
		}
		pd.Evaluations++
		pd.ByPhase[phase]++
		if phase == evalGraphs[e.policy].Initial && ready && deadline.Valid && deadline.Time.After(now) {
			evalPool = append(evalPool, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cut = len(evalPool) * 2 / 3
	pd.EvalPoolHTTP, pd.EvalPoolRaw = evalPool[:cut], evalPool[cut:]

	err = each(ctx, db, sqlBudgetLines, nil, func(rows *sql.Rows) error {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		pd.budgetLineIDs = append(pd.budgetLineIDs, id)
		pd.LineContracts = append(pd.LineContracts, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(pd.LineContracts)
	pd.Lines, pd.linePoolBefore = len(pd.budgetLineIDs), len(pd.LinePool)
	// Moves in a random order, so concurrent clients reserve on the same
	// lines as often as the line sizes make them.
	shuffle(pd.LinePool, 16)
	shuffle(pd.PlainPool, 17)

	return ds, nil
}

type user struct{ id, email string }

// each runs q and hands fn every row.
func each(ctx context.Context, db *sql.DB, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// column returns q's single string column.
func column(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	var out []string
	err := each(ctx, db, q, nil, func(rows *sql.Rows) error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// rank orders the phases of both policies along policy B's path, the
// rejection last.
func rank(graphs map[string]*graph, phase string) int {
	if i := slices.Index(graphs["B"].Normal, phase); i >= 0 {
		return i
	}
	if i := slices.Index(graphs["A"].Normal, phase); i >= 0 {
		return i
	}
	return 100
}
