package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/money"
	"github.com/contractflow/contractflow/platform/search"
)

// The bulk demo evaluations (contractflow seed --demo-size): over both
// policies and every phase of the definitions assigned to them, read from
// the engine, each with its quotations, the hash-chained history of the
// moves it made, the required department opinions once past
// ChoYKienPhongBan, and a voucher code continuing the module's sequences.
// Submitted ones are ready (a winner, enough quotations, payment terms).

// demoEvalShare is the phase mix per policy (percent).
var demoEvalShare = map[string][]struct {
	Phase string
	Share int
}{
	PolicyA: {{DangSoanThao, 24}, {ChoDuAn, 11}, {ChoCEODuyetNCC, 10}, {DaDuyet, 47}, {TuChoi, 8}},
	PolicyB: {{DangSoanThao, 20}, {ChoDuAn, 9}, {ChoYKienPhongBan, 6}, {ChoCCMKiemTra, 5}, {ChoCEODuyetNCC, 6}, {DaDuyet, 46}, {TuChoi, 8}},
}

var demoEvalKinds = []string{"Đánh giá mua", "So sánh báo giá", "Lựa chọn nhà cung cấp", "Đánh giá thuê"}

// demoMinQuotes is the quotations a policy's submission needs.
var demoMinQuotes = map[string]int{PolicyA: 1, PolicyB: 3}

func demoEvalPhase(policy string, n int) string {
	for _, p := range demoEvalShare[policy] {
		if n < p.Share {
			return p.Phase
		}
		n -= p.Share
	}
	return DangSoanThao
}

// demoPath is a definition's normal path and, per phase, the role moving
// out of it ("" for the creator) and its SLA hours.
type demoPath struct {
	def    *workflowdesigner.Definition
	phases []string
	mover  map[string]string
	sla    map[string]int
}

func (s *Service) demoPath(ctx context.Context, policy string) (*demoPath, error) {
	def, err := s.Workflows.ForDocumentType(ctx, documentType(policy))
	if err != nil {
		return nil, fmt.Errorf("workflow of policy %s: %w", policy, err)
	}
	p := &demoPath{def: def, phases: []string{def.InitialPhase}, mover: map[string]string{}, sla: map[string]int{}}
	terminal := map[string]bool{}
	for _, st := range def.Steps {
		p.sla[st.Phase], terminal[st.Phase] = st.SLAHours, st.Terminal
	}
	for at := def.InitialPhase; !terminal[at] && len(p.phases) <= len(def.Steps); {
		next := ""
		for _, t := range def.Transitions {
			if t.From == at && t.Normal && t.Kind == workflowdesigner.Forward {
				next = t.To
				if at != def.InitialPhase && len(t.Roles) > 0 {
					p.mover[at] = t.Roles[0]
				}
				break
			}
		}
		if next == "" {
			break
		}
		p.phases, at = append(p.phases, next), next
	}
	for _, sh := range demoEvalShare[policy] {
		if sh.Phase != TuChoi && !slices.Contains(p.phases, sh.Phase) {
			return nil, fmt.Errorf("workflow of policy %s: the demo phase %s is not on its normal path %v", policy, sh.Phase, p.phases)
		}
	}
	return p, nil
}

var (
	demoEvalColumns = []string{"id", "ma_phieu", "policy", "title", "project_id", "department_id", "category", "description", "estimated_value",
		"currency", "selected_quotation_id", "selection_reason", "payment_terms", "approved_at", "search_text", "phase", "sla_deadline",
		"sla_warning_sent", "workflow_definition_id", "history_hash", "version", "created_at", "created_by", "updated_at", "updated_by"}
	demoQuoteColumns   = []string{"id", "evaluation_id", "supplier_id", "amount", "delivery_days", "warranty_months", "notes", "created_at", "created_by", "updated_at", "updated_by"}
	demoHistoryColumns = []string{"id", "evaluation_id", "from_phase", "to_phase", "approver_user_id", "decision", "comment", "approved_at", "hash", "prev_hash"}
	demoOpinionColumns = []string{"id", "evaluation_id", "kind", "verdict", "comment", "user_id", "created_at", "updated_at"}
)

// SeedDemoSet adds set.Size.Evaluations demo evaluations unless the first
// is there already.
func (s *Service) SeedDemoSet(ctx context.Context, set *kernel.DemoSet) error {
	n := set.Size.Evaluations
	if n == 0 {
		return nil
	}
	var have int64
	if err := s.DB.Conn(ctx).Model(&Evaluation{}).Where("id = ?", kernel.NewID(set.Rand(3), 0)).Count(&have).Error; err != nil || have > 0 {
		return err
	}
	if len(set.Suppliers) < 5 || len(set.Projects) == 0 {
		return errors.New("demo evaluations need at least 5 suppliers and a project")
	}
	paths := map[string]*demoPath{}
	for _, p := range Policies {
		var err error
		if paths[p], err = s.demoPath(ctx, p); err != nil {
			return err
		}
	}
	creators := set.UsersByRole["Procurement"]
	if len(creators) == 0 {
		return errors.New("no demo Procurement user")
	}
	r := set.Rand(3)
	pick := func(role string) string {
		if us := set.UsersByRole[role]; len(us) > 0 {
			return us[r.IntN(len(us))]
		}
		return creators[0]
	}
	var seqRows []struct {
		Prefix  string
		LastSeq int
	}
	if err := s.DB.Conn(ctx).Table("purchase_evaluation_code_sequences").Select("prefix", "last_seq").Scan(&seqRows).Error; err != nil {
		return err
	}
	seqs, before := map[string]int{}, map[string]bool{}
	for _, q := range seqRows {
		seqs[q.Prefix], before[q.Prefix] = q.LastSeq, true
	}
	terms := termsJSON([]PaymentTerm{{Milestone: "Tạm ứng", Percent: money.FromUnits(30), DueDays: ptr(7)},
		{Milestone: "Nghiệm thu", Percent: money.FromUnits(70), DueDays: ptr(30)}})
	now := set.Now
	seq := 0
	id := func() string { seq++; return kernel.NewID(r, seq-1) }
	const perTx = 2_000
	for from := 0; from < n; from += perTx {
		var eRows, qRows, hRows, oRows [][]any
		for range min(perTx, n-from) {
			eid := id()
			// 20 million to 2 billion VND, log-uniform: about 30 % reach
			// the policy B threshold of 500 million.
			est := money.Amount(int64(math.Exp(math.Log(2e7)+r.Float64()*(math.Log(2e9)-math.Log(2e7)))/1000) * 1000 * 100)
			policy := PolicyA
			if est >= s.Config.Threshold() {
				policy = PolicyB
			}
			path := paths[policy]
			phase := demoEvalPhase(policy, r.IntN(100))
			var walked []string
			if phase == TuChoi {
				k := 1 + r.IntN(len(path.phases)-2) // rejected while waiting in path[k]
				walked = append(slices.Clone(path.phases[:k+1]), TuChoi)
			} else {
				walked = path.phases[:slices.Index(path.phases, phase)+1]
			}
			terminal := phase == DaDuyet || phase == TuChoi
			var created time.Time
			if terminal {
				created = now.Add(-time.Duration(int64(3*24*time.Hour) + r.Int64N(int64(700*24*time.Hour))))
			} else {
				created = now.Add(-time.Duration(int64(time.Hour) + r.Int64N(int64(90*24*time.Hour))))
			}
			created = created.Truncate(time.Microsecond)
			creator := creators[r.IntN(len(creators))]
			proj := set.Projects[kernel.Skewed(r, len(set.Projects))]
			var dept, category any
			if r.IntN(4) > 0 && len(set.Departments) > 0 {
				dept = set.Departments[r.IntN(len(set.Departments))]
			}
			if r.IntN(5) > 0 {
				category = Categories[r.IntN(len(Categories))]
			}
			// Drafts may have too few quotations yet; a submitted one has
			// at least the policy's minimum.
			ready := phase != DangSoanThao || r.IntN(10) > 0
			least := demoMinQuotes[policy]
			nq := least + r.IntN(3)
			if !ready {
				nq = r.IntN(least + 1)
			}
			first := r.IntN(len(set.Suppliers))
			step := 1 + r.IntN(max(1, len(set.Suppliers)/5)) // k*step < len: distinct suppliers
			type quote struct {
				id     string
				amount int64
			}
			quotes := make([]quote, nq)
			for k := range nq {
				q := quote{id: id(), amount: max(100_000, int64(est)*int64(85+r.IntN(30))/100/100_000*100_000)}
				quotes[k] = q
				var days, months any
				if r.IntN(3) > 0 {
					days = 7 + r.IntN(84)
				}
				if r.IntN(2) == 0 {
					months = 6 * (1 + r.IntN(4))
				}
				qRows = append(qRows, []any{q.id, eid, set.Suppliers[(first+k*step)%len(set.Suppliers)], q.amount, days, months,
					"Báo giá số " + fmt.Sprint(1000+r.IntN(9000)), created, creator, created, creator})
			}
			var winner any
			reason, payment := "", "[]"
			if ready && nq > 0 {
				w := 0
				for k := range quotes {
					if quotes[k].amount < quotes[w].amount {
						w = k
					}
				}
				if nq > 1 && r.IntN(5) == 0 { // not the cheapest, with a reason
					w = (w + 1) % nq
					reason = "Tiến độ giao hàng và bảo hành tốt hơn."
				}
				winner, payment = quotes[w].id, terms
			}
			at, head, lastBy := created, "", creator
			gap := min(now.Sub(created)/time.Duration(len(walked)+1), 5*24*time.Hour)
			var approvedAt any
			for j := 1; j < len(walked); j++ {
				at = at.Add(gap/2 + time.Duration(r.Int64N(int64(gap/2)+1))).Truncate(time.Microsecond)
				by := creator
				if role := path.mover[walked[j-1]]; role != "" {
					by = pick(role)
				}
				decision, comment := workflowdesigner.DecisionApprove, ""
				if walked[j] == TuChoi {
					decision, comment = workflowdesigner.DecisionReject, "Giá chào vượt dự toán; đề nghị chào giá lại."
				}
				approver := by
				hash := workflowdesigner.Link{DocumentID: eid, From: walked[j-1], To: walked[j], ApproverID: &approver,
					Decision: decision, Comment: comment, At: at}.Hash(head)
				hRows = append(hRows, []any{id(), eid, walked[j-1], walked[j], by, decision, comment, at, hash, head})
				head, lastBy = hash, by
				if walked[j] == DaDuyet {
					approvedAt = at
				}
				if walked[j-1] == ChoYKienPhongBan {
					for _, kind := range s.Config.RequiredOpinions {
						oRows = append(oRows, []any{id(), eid, kind, "Agree", "", pick(OpinionRoles[kind]), at, at})
					}
				}
			}
			var deadline any
			switch {
			case terminal:
			case phase == DangSoanThao && ready:
				deadline = now.Add(time.Hour + time.Duration(r.Int64N(int64(160*time.Hour)))).Truncate(time.Microsecond)
			case r.IntN(5) == 0: // overdue
				deadline = now.Add(-time.Hour - time.Duration(r.Int64N(int64(5*24*time.Hour)))).Truncate(time.Microsecond)
			default:
				deadline = now.Add(time.Hour + time.Duration(r.Int64N(int64(max(1, path.sla[phase]))*int64(time.Hour)))).Truncate(time.Microsecond)
			}
			prefix := fmt.Sprintf("PE/%d/%s", created.In(s.Location).Year(), policy)
			seqs[prefix]++
			code := fmt.Sprintf("%s/%03d", prefix, seqs[prefix])
			title := fmt.Sprintf("%s %s %s – %s", demoEvalKinds[r.IntN(len(demoEvalKinds))], kernel.DemoWorkItems[r.IntN(len(kernel.DemoWorkItems))],
				kernel.DemoZones[r.IntN(len(kernel.DemoZones))], proj.Code)
			eRows = append(eRows, []any{eid, code, policy, title, proj.ID, dept, category, "", est, "VND",
				winner, reason, payment, approvedAt, search.Text(title, code), phase, deadline,
				false, path.def.ID, head, len(walked), created, creator, at, lastBy})
		}
		err := s.DB.InTx(ctx, func(ctx context.Context) error {
			for _, t := range []struct {
				table   string
				columns []string
				rows    [][]any
			}{{"purchase_evaluations", demoEvalColumns, eRows}, {"purchase_evaluation_quotations", demoQuoteColumns, qRows},
				{"purchase_evaluation_history", demoHistoryColumns, hRows}, {"pe_dept_opinions", demoOpinionColumns, oRows}} {
				if err := s.DB.InsertRows(ctx, t.table, t.columns, t.rows); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		for prefix, k := range seqs {
			q, args := "INSERT INTO purchase_evaluation_code_sequences (prefix, last_seq) VALUES (?, ?)", []any{prefix, k}
			if before[prefix] {
				q, args = "UPDATE purchase_evaluation_code_sequences SET last_seq = ? WHERE prefix = ?", []any{k, prefix}
			}
			if err := s.DB.Conn(ctx).Exec(q, args...).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

func ptr[T any](v T) *T { return &v }
