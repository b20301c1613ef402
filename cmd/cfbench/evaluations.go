package main

// The procurement and budget part of the benchmark (issues 15 and 16):
// purchase evaluations with their quotations bulk-loaded beside the
// contracts, and Approved budgets whose lines many contracts waiting in
// DangKiemTraCCM name. Scenarios: creating and submitting evaluations, the
// ProjectManager's evaluation inbox, and the CostControl move into
// DangTrinhKy with and without a budget line (the reservation check's cost).

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/search"
)

// The raw limit of the evaluation writes.
const rawEvalTx = "raw evaluation transaction"

// The evaluation phases along the paths of purchase-evaluation-a and -b v1,
// the phase mix of the data set per policy (percent) and SLA hours.
var (
	evalPaths = map[string][]string{
		"A": {"DangSoanThao", "ChoDuAn", "ChoCEODuyetNCC", "DaDuyet"},
		"B": {"DangSoanThao", "ChoDuAn", "ChoYKienPhongBan", "ChoCCMKiemTra", "ChoCEODuyetNCC", "DaDuyet"},
	}
	evalShare = map[string][]struct {
		Phase string
		Share int
	}{
		"A": {{"DangSoanThao", 24}, {"ChoDuAn", 11}, {"ChoCEODuyetNCC", 10}, {"DaDuyet", 47}, {"TuChoi", 8}},
		"B": {{"DangSoanThao", 20}, {"ChoDuAn", 9}, {"ChoYKienPhongBan", 6}, {"ChoCCMKiemTra", 5}, {"ChoCEODuyetNCC", 6},
			{"DaDuyet", 46}, {"TuChoi", 8}},
	}
	evalPhases   = []string{"DangSoanThao", "ChoDuAn", "ChoYKienPhongBan", "ChoCCMKiemTra", "ChoCEODuyetNCC", "DaDuyet", "TuChoi"}
	evalSLAHours = map[string]int{"DangSoanThao": 168, "ChoDuAn": 72, "ChoYKienPhongBan": 72, "ChoCCMKiemTra": 48, "ChoCEODuyetNCC": 72}
	// evalMover is the role that moves an evaluation out of a phase (the
	// creator submits it).
	evalMover       = map[string]string{"ChoDuAn": "ProjectManager", "ChoYKienPhongBan": "Procurement", "ChoCCMKiemTra": "CostControl", "ChoCEODuyetNCC": "Director"}
	evalCategories  = []string{"Material", "Subcontract", "Service", "Equipment"}
	evalTitleKinds  = []string{"Đánh giá mua", "So sánh báo giá", "Lựa chọn nhà cung cấp", "Đánh giá thuê"}
	evalReadyTerms  = `[{"milestone":"Tạm ứng","percent":30,"dueDays":7},{"milestone":"Nghiệm thu","percent":70,"dueDays":30}]`
	policyThreshold = int64(500_000_000) * 100 // procurement.policyBThreshold, hundredths of VND
)

// procData is what the procurement and budget load produced.
type procData struct {
	Evaluations, Quotations, History, Opinions int
	ByPhase                                    map[string]int
	EvalPoolHTTP, EvalPoolRaw                  []evalRef // ready DangSoanThao evaluations, split
	ProcurementEmails, PMEmails, CCMEmails     []string
	EvalActorID                                string // mover of the raw evaluation transaction
	ProjectIDs, DepartmentIDs                  []string

	Budgets, Lines      int
	LinePool, PlainPool []string // DangKiemTraCCM contracts with and without a budget line
	LineContracts       []int    // contracts per line, sorted
	BudgetCheck         string   // what the check after the run found
	BudgetCheckOK       bool
	BudgetCheckMeasured bool
	budgetLineIDs       []string
	linePoolBefore      int
}

type evalRef struct{ id, policy string }

func evalPhase(policy string, n int) string {
	for _, p := range evalShare[policy] {
		if n < p.Share {
			return p.Phase
		}
		n -= p.Share
	}
	return "DangSoanThao"
}

// loadProcurement bulk-inserts n evaluations and the budgets, with the
// server stopped, as loadSQL does the contracts.
func loadProcurement(ctx context.Context, d *database, ds *dataset, n int) error {
	sqlDB, err := d.open(1)
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	l := &loader{db: d, sql: sqlDB, rng: rand.New(rand.NewPCG(2026, 15)), now: time.Now().UTC().Truncate(time.Microsecond), stmt: map[string]string{}}
	pd := &procData{ByPhase: map[string]int{}}
	ds.Proc = pd
	byRole, err := l.usersByRole(ctx)
	if err != nil {
		return err
	}
	for role, dst := range map[string]*[]string{"Procurement": &pd.ProcurementEmails, "ProjectManager": &pd.PMEmails, "CostControl": &pd.CCMEmails} {
		for _, u := range byRole[role] {
			*dst = append(*dst, u.email)
		}
		if len(*dst) == 0 {
			return fmt.Errorf("no %s user", role)
		}
	}
	if pd.ProjectIDs, err = l.ids(ctx, "SELECT id FROM projects ORDER BY code"); err != nil {
		return err
	}
	if pd.DepartmentIDs, err = l.ids(ctx, "SELECT id FROM departments ORDER BY code"); err != nil {
		return err
	}
	if n > 0 {
		if err := l.evaluations(ctx, pd, byRole, n); err != nil {
			return fmt.Errorf("evaluations: %w", err)
		}
	}
	if err := l.budgets(ctx, pd, byRole); err != nil {
		return fmt.Errorf("budgets: %w", err)
	}
	if d.driver == "postgres" {
		for _, t := range []string{"purchase_evaluations", "purchase_evaluation_quotations", "purchase_evaluation_history",
			"pe_dept_opinions", "purchase_evaluation_code_sequences", "budgets", "budget_lines", "contracts"} {
			if _, err := sqlDB.ExecContext(ctx, "VACUUM ANALYZE "+t); err != nil {
				return fmt.Errorf("vacuum analyze %s: %w", t, err)
			}
		}
	}
	return nil
}

// evaluations inserts n evaluations over both policies and every phase,
// each with its quotations, one history row per move it made and, past
// ChoYKienPhongBan, the department opinions.
func (l *loader) evaluations(ctx context.Context, pd *procData, byRole map[string][]user, n int) error {
	defs := map[string]string{}
	for _, p := range []string{"A", "B"} {
		var id string
		if err := l.sql.QueryRowContext(ctx, l.db.rebind("SELECT definition_id FROM workflow_type_assignments WHERE document_type = ?"),
			"purchaseEvaluation."+p).Scan(&id); err != nil {
			return fmt.Errorf("workflow assignment purchaseEvaluation.%s: %w", p, err)
		}
		defs[p] = id
	}
	suppliers, err := l.ids(ctx, "SELECT id FROM suppliers ORDER BY code")
	if err != nil {
		return err
	}
	var projects []project
	rows, err := l.sql.QueryContext(ctx, "SELECT id, code FROM projects ORDER BY code")
	if err != nil {
		return err
	}
	for rows.Next() {
		var p project
		if err := rows.Scan(&p.id, &p.code); err != nil {
			rows.Close()
			return err
		}
		projects = append(projects, p)
	}
	rows.Close()
	if len(suppliers) < 5 || len(projects) == 0 {
		return errors.New("evaluations need at least 5 suppliers and a project")
	}
	creators := byRole["Procurement"]
	pick := func(role string) string { us := byRole[role]; return us[l.rng.IntN(len(us))].id }
	ict := time.FixedZone("ICT", 7*3600)
	rng := l.rng
	seqs := map[string]int{}
	var pool []evalRef
	const evalColumns = "id, ma_phieu, policy, title, project_id, department_id, category, description, estimated_value, currency, " +
		"selected_quotation_id, selection_reason, payment_terms, contract_id, approved_at, search_text, phase, sla_deadline, " +
		"sla_warning_sent, sla_reminded_at, workflow_definition_id, history_hash, version, created_at, created_by, updated_at, updated_by, deleted_at, deleted_by"
	const perTx = 2_000
	for from := 0; from < n; from += perTx {
		var eRows, qRows, hRows, oRows [][]any
		for range min(perTx, n-from) {
			id := uuid.Must(uuid.NewV7()).String()
			// 20 million to 2 billion VND, log-uniform: about 30 % reach
			// the policy B threshold of 500 million.
			est := int64(math.Exp(math.Log(2e7)+rng.Float64()*(math.Log(2e9)-math.Log(2e7)))/1000) * 1000 * 100
			policy := "A"
			if est >= policyThreshold {
				policy = "B"
			}
			phase := evalPhase(policy, rng.IntN(100))
			path := evalPaths[policy]
			var walked []string
			if phase == "TuChoi" {
				k := 1 + rng.IntN(len(path)-2) // rejected while waiting in path[k]
				walked = append(append([]string(nil), path[:k+1]...), "TuChoi")
			} else {
				walked = path[:slices.Index(path, phase)+1]
			}
			terminal := phase == "DaDuyet" || phase == "TuChoi"
			var created time.Time
			if terminal {
				created = l.now.Add(-time.Duration(int64(3*24*time.Hour) + rng.Int64N(int64(700*24*time.Hour))))
			} else {
				created = l.now.Add(-time.Duration(int64(time.Hour) + rng.Int64N(int64(90*24*time.Hour))))
			}
			created = created.Truncate(time.Microsecond)
			creator := creators[rng.IntN(len(creators))].id
			proj := projects[skewed(rng, len(projects))]
			var dept, category any
			if rng.IntN(4) > 0 {
				dept = pd.DepartmentIDs[rng.IntN(len(pd.DepartmentIDs))]
			}
			if rng.IntN(5) > 0 {
				category = evalCategories[rng.IntN(len(evalCategories))]
			}
			// Quotations: drafts may have none yet; a submitted one has at
			// least the policy's minimum (A 1, B 3).
			ready := phase != "DangSoanThao" || rng.IntN(10) > 0
			least := map[string]int{"A": 1, "B": 3}[policy]
			nq := least + rng.IntN(3)
			if !ready {
				nq = rng.IntN(least + 1)
			}
			first := rng.IntN(len(suppliers))
			step := 1 + rng.IntN(len(suppliers)/5) // k*step < len: distinct suppliers
			type quote struct {
				id     string
				amount int64
			}
			quotes := make([]quote, nq)
			for k := range nq {
				q := quote{id: uuid.Must(uuid.NewV7()).String(), amount: max(100_000, est*int64(85+rng.IntN(30))/100/100_000*100_000)}
				quotes[k] = q
				var days, months any
				if rng.IntN(3) > 0 {
					days = 7 + rng.IntN(84)
				}
				if rng.IntN(2) == 0 {
					months = 6 * (1 + rng.IntN(4))
				}
				qRows = append(qRows, []any{q.id, id, suppliers[(first+k*step)%len(suppliers)], q.amount, days, months,
					"Báo giá số " + fmt.Sprint(1000+rng.IntN(9000)), created, creator, created, creator})
			}
			var winner any
			reason, terms := "", "[]"
			if ready && nq > 0 {
				w := 0
				for k := range quotes {
					if quotes[k].amount < quotes[w].amount {
						w = k
					}
				}
				if nq > 1 && rng.IntN(5) == 0 { // not the cheapest, with a reason
					w = (w + 1) % nq
					reason = "Tiến độ giao hàng và bảo hành tốt hơn."
				}
				winner = quotes[w].id
				terms = evalReadyTerms
			}
			// History: one row per move, as the runtime writes them, but
			// with empty hashes (the document's history_hash stays empty
			// too, which the runtime's compare-and-set reads alike).
			at := created
			gap := min(l.now.Sub(created)/time.Duration(len(walked)+1), 5*24*time.Hour)
			lastBy := creator
			var approvedAt any
			for j := 1; j < len(walked); j++ {
				at = at.Add(gap/2 + time.Duration(rng.Int64N(int64(gap/2)+1))).Truncate(time.Microsecond)
				by := creator
				if r, ok := evalMover[walked[j-1]]; ok {
					by = pick(r)
				}
				decision, comment := "Approve", ""
				if walked[j] == "TuChoi" {
					decision, comment = "Reject", "Giá chào vượt dự toán; đề nghị chào giá lại."
				}
				hRows = append(hRows, []any{uuid.Must(uuid.NewV7()).String(), id, walked[j-1], walked[j], by, decision, comment, at, "", ""})
				lastBy = by
				if walked[j] == "DaDuyet" {
					approvedAt = at
				}
				if walked[j-1] == "ChoYKienPhongBan" {
					for _, kind := range []string{"PRO", "CCM", "FIN"} {
						role := map[string]string{"PRO": "Procurement", "CCM": "CostControl", "FIN": "Finance"}[kind]
						oRows = append(oRows, []any{uuid.Must(uuid.NewV7()).String(), id, kind, "Agree", "", pick(role), at, at})
					}
				}
			}
			var deadline any
			inPool := false
			switch {
			case terminal:
			case phase == "DangSoanThao" && ready:
				inPool = true
				deadline = l.now.Add(time.Hour + time.Duration(rng.Int64N(int64(160*time.Hour)))).Truncate(time.Microsecond)
			case rng.IntN(5) == 0: // overdue
				deadline = l.now.Add(-time.Hour - time.Duration(rng.Int64N(int64(5*24*time.Hour)))).Truncate(time.Microsecond)
			default:
				deadline = l.now.Add(time.Hour + time.Duration(rng.Int64N(int64(evalSLAHours[phase])*int64(time.Hour)))).Truncate(time.Microsecond)
			}
			prefix := fmt.Sprintf("PE/%d/%s", created.In(ict).Year(), policy)
			seqs[prefix]++
			code := fmt.Sprintf("%s/%03d", prefix, seqs[prefix])
			title := fmt.Sprintf("%s %s %s – %s", evalTitleKinds[rng.IntN(len(evalTitleKinds))], titleItems[rng.IntN(len(titleItems))],
				titleZones[rng.IntN(len(titleZones))], proj.code)
			eRows = append(eRows, []any{id, code, policy, title, proj.id, dept, category, "", est, "VND",
				winner, reason, terms, nil, approvedAt, search.Text(title, code), phase, deadline,
				false, nil, defs[policy], "", len(walked), created, creator, at, lastBy, nil, nil})
			pd.ByPhase[phase]++
			if inPool {
				pool = append(pool, evalRef{id: id, policy: policy})
			}
		}
		err := l.inTx(ctx, func(tx *sql.Tx) error {
			if err := l.insert(ctx, tx, "purchase_evaluations", evalColumns, eRows); err != nil {
				return err
			}
			if err := l.insert(ctx, tx, "purchase_evaluation_quotations", "id, evaluation_id, supplier_id, amount, delivery_days, "+
				"warranty_months, notes, created_at, created_by, updated_at, updated_by", qRows); err != nil {
				return err
			}
			if err := l.insert(ctx, tx, "purchase_evaluation_history", "id, evaluation_id, from_phase, to_phase, approver_user_id, "+
				"decision, comment, approved_at, hash, prev_hash", hRows); err != nil {
				return err
			}
			return l.insert(ctx, tx, "pe_dept_opinions", "id, evaluation_id, kind, verdict, comment, user_id, created_at, updated_at", oRows)
		})
		if err != nil {
			return err
		}
		pd.Evaluations += len(eRows)
		pd.Quotations += len(qRows)
		pd.History += len(hRows)
		pd.Opinions += len(oRows)
	}
	// The sequences go on from the loaded codes, so creating through the
	// API in this year's prefix never collides with a loaded one.
	var seqRows [][]any
	for prefix, k := range seqs {
		seqRows = append(seqRows, []any{prefix, k})
	}
	if err := l.inTx(ctx, func(tx *sql.Tx) error {
		return l.insert(ctx, tx, "purchase_evaluation_code_sequences", "prefix, last_seq", seqRows)
	}); err != nil {
		return err
	}
	cut := len(pool) * 2 / 3
	pd.EvalPoolHTTP, pd.EvalPoolRaw = pool[:cut], pool[cut:]
	pd.EvalActorID = byRole["ProjectManager"][0].id
	return nil
}

// budgets gives the projects with the most contracts waiting in
// DangKiemTraCCM an Approved budget each (Warn and Block alternately),
// with about one line per 40 of those contracts, and names the lines on
// them: half of the waiting contracts name a line, the rest none (the
// baseline move). Each line plans twice the value of its contracts, so no
// move is refused or overdraws.
func (l *loader) budgets(ctx context.Context, pd *procData, byRole map[string][]user) error {
	rows, err := l.sql.QueryContext(ctx, `SELECT c.id, c.project_id, p.code, c.value FROM contracts c JOIN projects p ON p.id = c.project_id
		WHERE c.phase = 'DangKiemTraCCM' AND c.deleted_at IS NULL AND c.budget_line_id IS NULL ORDER BY c.id`)
	if err != nil {
		return err
	}
	type waiting struct {
		id    string
		value int64
	}
	byProject := map[string][]waiting{}
	codes := map[string]string{}
	total := 0
	for rows.Next() {
		var w waiting
		var pid, code string
		if err := rows.Scan(&w.id, &pid, &code, &w.value); err != nil {
			rows.Close()
			return err
		}
		byProject[pid] = append(byProject[pid], w)
		codes[pid] = code
		total++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	projectIDs := make([]string, 0, len(byProject))
	for pid := range byProject {
		projectIDs = append(projectIDs, pid)
	}
	slices.SortFunc(projectIDs, func(a, b string) int {
		if d := len(byProject[b]) - len(byProject[a]); d != 0 {
			return d
		}
		return strings.Compare(codes[a], codes[b])
	})
	ict := time.FixedZone("ICT", 7*3600)
	year := l.now.In(ict).Year()
	approver := byRole["CostControl"][0].id
	var bRows, lRows [][]any
	type assign struct{ contract, line string }
	var assigns []assign
	taken := 0
	for i, pid := range projectIDs {
		ws := byProject[pid]
		if taken >= total/2 {
			for _, w := range ws {
				pd.PlainPool = append(pd.PlainPool, w.id)
			}
			continue
		}
		taken += len(ws)
		budgetID := uuid.Must(uuid.NewV7()).String()
		nLines := max(1, (len(ws)+20)/40)
		lineIDs := make([]string, nLines)
		planned := make([]int64, nLines)
		counts := make([]int, nLines)
		for k := range nLines {
			lineIDs[k] = uuid.Must(uuid.NewV7()).String()
		}
		for k, w := range ws {
			planned[k%nLines] += 2 * w.value
			counts[k%nLines]++
			assigns = append(assigns, assign{w.id, lineIDs[k%nLines]})
			pd.LinePool = append(pd.LinePool, w.id)
		}
		var sum int64
		for k := range nLines {
			planned[k] += 1_000_000_000 * 100 // and a billion VND of slack
			sum += planned[k]
			lRows = append(lRows, []any{lineIDs[k], budgetID, fmt.Sprintf("L%02d", k+1), fmt.Sprintf("Hạng mục %s %d", titleItems[k%len(titleItems)], k+1),
				evalCategories[k%len(evalCategories)], planned[k], 0, planned[k], 0, 0, 0, planned[k], 1, l.now, approver, l.now, approver, nil, nil})
			pd.LineContracts = append(pd.LineContracts, counts[k])
			pd.budgetLineIDs = append(pd.budgetLineIDs, lineIDs[k])
		}
		onExceed := "Warn"
		if i%2 == 1 {
			onExceed = "Block"
		}
		code := "NS-" + codes[pid]
		name := fmt.Sprintf("Ngân sách dự án %s năm %d", codes[pid], year)
		bRows = append(bRows, []any{budgetID, code, name, pid, nil, year, "VND", "Approved", onExceed, "",
			sum, 0, 0, 0, 0, sum, l.now, approver, nil, nil, search.Text(code, name), 2, l.now, approver, l.now, approver, nil, nil})
	}
	slices.Sort(pd.LineContracts)
	// Moves in a random order, so concurrent clients reserve on the same
	// lines as often as the line sizes make them.
	rng := l.rng
	rng.Shuffle(len(pd.LinePool), func(i, j int) { pd.LinePool[i], pd.LinePool[j] = pd.LinePool[j], pd.LinePool[i] })
	rng.Shuffle(len(pd.PlainPool), func(i, j int) { pd.PlainPool[i], pd.PlainPool[j] = pd.PlainPool[j], pd.PlainPool[i] })
	pd.Budgets, pd.Lines = len(bRows), len(lRows)
	pd.linePoolBefore = len(pd.LinePool)
	return l.inTx(ctx, func(tx *sql.Tx) error {
		if err := l.insert(ctx, tx, "budgets", "id, code, name, project_id, department_id, fiscal_year, currency, status, on_exceed, description, "+
			"planned_total, adjustments_total, reserved_total, committed_total, actual_total, remaining, approved_at, approved_by, closed_at, closed_by, "+
			"search_text, version, created_at, created_by, updated_at, updated_by, deleted_at, deleted_by", bRows); err != nil {
			return err
		}
		if err := l.insert(ctx, tx, "budget_lines", "id, budget_id, code, name, category, original_amount, adjustments_total, planned_amount, "+
			"reserved_amount, committed_amount, actual_amount, remaining, version, created_at, created_by, updated_at, updated_by, deleted_at, deleted_by", lRows); err != nil {
			return err
		}
		upd, err := tx.PrepareContext(ctx, l.db.rebind("UPDATE contracts SET budget_line_id = ? WHERE id = ?"))
		if err != nil {
			return err
		}
		defer upd.Close()
		for _, a := range assigns {
			if _, err := upd.ExecContext(ctx, a.line, a.contract); err != nil {
				return err
			}
		}
		return nil
	})
}

// describe is the data-set line of the report.
func (pd *procData) describe() string {
	var b strings.Builder
	if pd.Evaluations > 0 {
		var phases []string
		for _, p := range evalPhases {
			phases = append(phases, fmt.Sprintf("%s %s", p, thousands(pd.ByPhase[p])))
		}
		fmt.Fprintf(&b, "- Purchase evaluations: %s (policy A below 500 million VND, B from it) with %s quotations, %s history rows and %s department opinions; by phase: %s; %s ready to submit in DangSoanThao (%s for HTTP, %s for the raw transaction)\n",
			thousands(pd.Evaluations), thousands(pd.Quotations), thousands(pd.History), thousands(pd.Opinions), strings.Join(phases, ", "),
			thousands(len(pd.EvalPoolHTTP)+len(pd.EvalPoolRaw)), thousands(len(pd.EvalPoolHTTP)), thousands(len(pd.EvalPoolRaw)))
	}
	if pd.Lines > 0 {
		fmt.Fprintf(&b, "- Budgets: %d Approved budgets (Warn and Block alternately) of the projects with most contracts in DangKiemTraCCM, %d lines named by %s of those contracts (%d to %d per line, median %d); %s more in DangKiemTraCCM name no line\n",
			pd.Budgets, pd.Lines, thousands(pd.linePoolBefore), pd.LineContracts[0], pd.LineContracts[len(pd.LineContracts)-1],
			pd.LineContracts[len(pd.LineContracts)/2], thousands(len(pd.PlainPool)))
	}
	return b.String()
}

// procTokens are the tokens of the users the procurement and budget
// scenarios act as: one per client where there are enough users.
type procTokens struct {
	procurement, ccm []string
	pm               string
	inbox            int // evaluations in the ProjectManager's inbox
}

func (s *session) signInProcurement(ctx context.Context, clients int) error {
	pd := s.ds.Proc
	if pd == nil {
		return nil
	}
	for _, g := range []struct {
		emails []string
		dst    *[]string
	}{{pd.ProcurementEmails, &s.proc.procurement}, {pd.CCMEmails, &s.proc.ccm}} {
		for i := range min(clients, len(g.emails)) {
			t, err := s.login(ctx, g.emails[i], benchPassword)
			if err != nil {
				return fmt.Errorf("%s: %w", g.emails[i], err)
			}
			*g.dst = append(*g.dst, t)
		}
	}
	var err error
	if s.proc.pm, err = s.login(ctx, pd.PMEmails[0], benchPassword); err != nil {
		return fmt.Errorf("%s: %w", pd.PMEmails[0], err)
	}
	if pd.Evaluations > 0 {
		if s.proc.inbox, err = s.count(ctx, evalInboxPath, s.proc.pm); err != nil {
			return fmt.Errorf("evaluation inbox: %w", err)
		}
		if s.proc.inbox == 0 {
			return errors.New("the ProjectManager's evaluation inbox is empty: the data set is wrong")
		}
	}
	return nil
}

const evalInboxPath = "/api/purchase-evaluations/inbox?page=1&pageSize=20"

// evaluationInbox is page 1 of the evaluation inbox of a ProjectManager
// (ChoDuAn of both policies), a GET compared with the Fiber handler.
func (s *session) evaluationInbox() []scenario {
	if s.ds.Proc == nil || s.ds.Proc.Evaluations == 0 {
		return nil
	}
	return []scenario{{name: "evaluation inbox page 1", rawOf: rawFiber, limits: s.l, warmup: 50,
		fn:   s.get(evalInboxPath, func() string { return s.proc.pm }),
		note: fmt.Sprintf("GET %s as a ProjectManager (%s evaluations in the inbox)", evalInboxPath, thousands(s.proc.inbox))}}
}

// procurementWrites are the write scenarios of issues 15 and 16, run
// after the contract transition: the CostControl move into DangTrinhKy
// without and then with a budget line, then creating and submitting
// evaluations. Each stops when its pool runs out.
func (s *session) procurementWrites() []scenario {
	pd := s.ds.Proc
	if pd == nil {
		return nil
	}
	var out []scenario
	toSign := mustJSON(map[string]string{"toPhase": "DangTrinhKy"})
	ccmMove := func(pool []string) op {
		return func(ctx context.Context, w, seq int) error {
			if seq >= len(pool) {
				return errExhausted
			}
			return s.c.call(ctx, http.MethodPost, "/api/contracts/"+pool[seq]+"/transitions", s.proc.ccm[w%len(s.proc.ccm)], toSign, http.StatusOK, nil)
		}
	}
	if len(pd.PlainPool) > 0 && len(pd.LinePool) > 0 {
		out = append(out,
			scenario{name: "to signature, no budget line", rawOf: rawTx, limits: s.l, fn: ccmMove(pd.PlainPool),
				note: fmt.Sprintf("POST /api/contracts/{id}/transitions DangKiemTraCCM→DangTrinhKy as CostControl, distinct contracts naming no budget line (%s available): the baseline of the next row", thousands(len(pd.PlainPool)))},
			scenario{name: "to signature, budget line", rawOf: rawTx, limits: s.l, fn: ccmMove(pd.LinePool),
				note: fmt.Sprintf("the same move on distinct contracts naming a line of an Approved budget (%s available over %d lines): the reservation check and its write", thousands(len(pd.LinePool)), pd.Lines)})
	}
	if pd.Evaluations == 0 {
		return out
	}
	create := func(ctx context.Context, w, seq int) error {
		body := map[string]any{"title": fmt.Sprintf("Đánh giá mua %s đợt %d", titleItems[seq%len(titleItems)], seq),
			"projectId": pd.ProjectIDs[seq%len(pd.ProjectIDs)], "category": evalCategories[seq%len(evalCategories)],
			"description": "Tạo bởi cfbench.", "estimatedValue": json.Number(fmt.Sprint(50_000_000 + (seq%40)*25_000_000))}
		if seq%4 > 0 {
			body["departmentId"] = pd.DepartmentIDs[seq%len(pd.DepartmentIDs)]
		}
		return s.c.call(ctx, http.MethodPost, "/api/purchase-evaluations", s.proc.procurement[w%len(s.proc.procurement)], mustJSON(body), http.StatusCreated, nil)
	}
	submit := mustJSON(map[string]string{"toPhase": "ChoDuAn"})
	transition := func(ctx context.Context, w, seq int) error {
		if seq >= len(pd.EvalPoolHTTP) {
			return errExhausted
		}
		return s.c.call(ctx, http.MethodPost, "/api/purchase-evaluations/"+pd.EvalPoolHTTP[seq].id+"/transitions",
			s.proc.procurement[w%len(s.proc.procurement)], submit, http.StatusOK, nil)
	}
	return append(out,
		scenario{name: "evaluation create", rawOf: rawEvalTx, limits: s.l, fn: create,
			note: "POST /api/purchase-evaluations as Procurement users (policy from the estimated value, 50 million to 1 billion VND; voucher code from the sequence)"},
		scenario{name: "evaluation transition", rawOf: rawEvalTx, limits: s.l, fn: transition,
			note: fmt.Sprintf("POST /api/purchase-evaluations/{id}/transitions DangSoanThao→ChoDuAn as Procurement users, distinct ready evaluations (winner chosen, enough quotations; %s available)", thousands(len(pd.EvalPoolHTTP)))})
}

// rawEvaluationTransaction is rawTransaction for evaluations: the
// compare-and-set UPDATE of purchase_evaluations (phase and history head),
// the INSERT of the history row, COMMIT, on the pool the HTTP scenario did
// not touch, two passes (DangSoanThao → ChoDuAn → the policy's next phase).
func rawEvaluationTransaction(ctx context.Context, d *database, pool []evalRef, actorID string, l limits) (result, error) {
	conns := l.Clients
	if d.driver == "sqlite" {
		conns = 1
	}
	db, err := d.open(conns)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	upd, err := db.PrepareContext(ctx, d.rebind(`UPDATE purchase_evaluations SET phase = ?, sla_deadline = ?, sla_warning_sent = ?,
		sla_reminded_at = NULL, history_hash = ?, updated_at = ?, updated_by = ?, version = version + 1
		WHERE id = ? AND phase = ? AND history_hash = ? AND deleted_at IS NULL`))
	if err != nil {
		return result{}, err
	}
	defer upd.Close()
	ins, err := db.PrepareContext(ctx, d.rebind(`INSERT INTO purchase_evaluation_history (id, evaluation_id, from_phase, to_phase,
		approver_user_id, decision, comment, approved_at, hash, prev_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return result{}, err
	}
	defer ins.Close()
	const passes = 2
	n := len(pool)
	if n == 0 {
		return result{}, errors.New("no evaluations left for the raw transaction")
	}
	l.MaxOps = min(l.MaxOps, n*passes)
	// The history heads each pass leaves, so the next compare-and-set
	// names the head it read, as the runtime does.
	heads := make([]string, n)
	fn := func(ctx context.Context, _, seq int) error {
		i, step := seq%n, seq/n
		e := pool[i]
		path := evalPaths[e.policy]
		from, to := path[step], path[step+1]
		now := time.Now().UTC()
		prev := ""
		if step > 0 {
			prev = heads[i]
		}
		head := fmt.Sprintf("%064x", uint64(seq)+1)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		res, err := tx.StmtContext(ctx, upd).ExecContext(ctx, to, now.Add(time.Duration(evalSLAHours[to])*time.Hour), false, head, now, actorID, e.id, from, prev)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			return fmt.Errorf("evaluation %s not in %s (%d rows, %v)", e.id, from, k, err)
		}
		if _, err := tx.StmtContext(ctx, ins).ExecContext(ctx, uuid.Must(uuid.NewV7()).String(), e.id, from, to, actorID, "Approve", "", now, head, prev); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		heads[i] = head
		return nil
	}
	cpu := selfCPU()
	r := drive(ctx, rawEvalTx, l, fn)
	r.CPU = selfCPU() - cpu
	r.Group = "raw"
	connsNote := fmt.Sprintf("a pool of %d connections", conns)
	if d.driver == "sqlite" {
		connsNote = "one connection, as the server's single SQLite writer"
	}
	r.Note = "UPDATE purchase_evaluations … WHERE id AND phase AND history_hash + INSERT purchase_evaluation_history + COMMIT via database/sql, " + connsNote
	return r, nil
}

// checkBudgets runs after the server stopped: every bench line's reserved
// amount is the sum of its open reservations and of the values of its
// contracts now in DangTrinhKy, and none is overdrawn.
func checkBudgets(ctx context.Context, d *database, pd *procData) {
	if pd == nil || len(pd.budgetLineIDs) == 0 {
		return
	}
	pd.BudgetCheckMeasured = true
	db, err := d.open(1)
	if err != nil {
		pd.BudgetCheck = "not checked: " + err.Error()
		return
	}
	defer db.Close()
	q := d.rebind(`SELECT l.reserved_amount, l.remaining, l.planned_amount,
		COALESCE((SELECT SUM(c.amount) FROM budget_commitments c WHERE c.budget_line_id = l.id AND c.closed_at IS NULL AND c.kind = 'Reserved'), 0),
		COALESCE((SELECT SUM(k.value) FROM contracts k WHERE k.budget_line_id = l.id AND k.phase = 'DangTrinhKy' AND k.deleted_at IS NULL), 0),
		(SELECT COUNT(*) FROM contracts k WHERE k.budget_line_id = l.id AND k.phase = 'DangTrinhKy' AND k.deleted_at IS NULL)
		FROM budget_lines l WHERE l.id = ?`)
	moved, bad := 0, 0
	var first string
	for _, id := range pd.budgetLineIDs {
		var reserved, remaining, planned, open, values int64
		var k int
		if err := db.QueryRowContext(ctx, q, id).Scan(&reserved, &remaining, &planned, &open, &values, &k); err != nil {
			pd.BudgetCheck = "not checked: " + err.Error()
			return
		}
		moved += k
		if reserved != open || reserved != values || remaining != planned-reserved || remaining < 0 {
			bad++
			if first == "" {
				first = fmt.Sprintf("line %s: reserved %d, open reservations %d, contracts in DangTrinhKy %d, remaining %d of %d", id, reserved, open, values, remaining, planned)
			}
		}
	}
	pd.BudgetCheckOK = bad == 0
	pd.BudgetCheck = fmt.Sprintf("%s contracts moved onto %d lines: every line's reserved amount equals its open reservations and its contracts' values, and none is overdrawn", thousands(moved), len(pd.budgetLineIDs))
	if bad > 0 {
		pd.BudgetCheck = fmt.Sprintf("%d of %d lines disagree; first: %s", bad, len(pd.budgetLineIDs), first)
	}
}

// procTargets are the figures of issues 15 and 16.
func (r *report) procTargets() []target {
	var ts []target
	if h, ok := r.find("evaluation transition"); ok {
		raw := r.Raw[rawEvalTx]
		ts = append(ts, target{"evaluation transition ≥ 50 % of the raw evaluation transaction rate (issue 15)",
			fmt.Sprintf("%s req/s vs %s tx/s = %s%s", rate(h.rate()), rate(raw.rate()), pct(h.Ratio), cpuRatio(h, raw)), verdict(h.Ratio >= 0.5 && h.Errors == 0)})
	}
	if h, ok := r.find("evaluation inbox page 1"); ok {
		ts = append(ts, target{"evaluation inbox page 1: p99 < 5 ms and ≥ 3 000 req/s (issue 15)",
			fmt.Sprintf("p99 %s, %s req/s", ms(h.pct(.99)), rate(h.rate())), verdict(h.pct(.99) < 5*time.Millisecond && h.rate() >= 3000 && h.Errors == 0)})
	}
	with, ok1 := r.find("to signature, budget line")
	without, ok2 := r.find("to signature, no budget line")
	if ok1 && ok2 {
		extra := with.cpuPerOp() - without.cpuPerOp()
		ts = append(ts, target{"budget check ≤ 0.1 ms of server CPU per move into DangTrinhKy (issue 16)",
			fmt.Sprintf("%s with a line − %s without = %s", ms(with.cpuPerOp()), ms(without.cpuPerOp()), signedMS(extra)),
			verdict(extra <= 100*time.Microsecond && with.Errors == 0 && without.Errors == 0)})
	}
	if pd := r.Data.Proc; pd != nil && pd.BudgetCheckMeasured {
		ts = append(ts, target{"concurrent reservations on one line never oversell (issue 16)", pd.BudgetCheck, verdict(pd.BudgetCheckOK)})
	}
	return ts
}

func signedMS(d time.Duration) string {
	if d < 0 {
		return "−" + ms(-d)
	}
	return "+" + ms(d)
}
