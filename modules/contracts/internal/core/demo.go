package core

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/kernel"
)

// The bulk demo contracts (contractflow seed --demo-size): spread over
// every phase of the workflow definition assigned to the contract types,
// read from the engine, each with the approval history of the moves it
// made along that definition's normal path, hash-chained as the runtime
// chains them, a code from the module's sequences past DangDongDau and,
// for some, comments. The counting and search triggers keep their tables
// true as the rows go in.

// demoPathShares is the phase mix along the normal path (percent),
// position by position, as in a system that has run for two years: mostly
// finished (demoFinishedShare); the rest of 100 goes to the rejection.
var demoPathShares = []int{12, 8, 10, 6, 5, 5, 4}

const demoFinishedShare = 44

// demoChunk is how many contracts, with their history and comments, go
// into one transaction.
const demoChunk = 5_000

var (
	demoTitleKinds = []string{"Hợp đồng thi công", "Hợp đồng cung cấp", "Hợp đồng thuê", "Hợp đồng dịch vụ", "Hợp đồng mua bán", "Hợp đồng khung"}
	demoComments   = []string{"Đã kiểm tra khối lượng, đề nghị chuyển bước.", "Bổ sung bảng giá chi tiết theo phụ lục 2.",
		"Nhà cung cấp xác nhận tiến độ giao hàng.", "Điều chỉnh điều khoản thanh toán 30/70.", "Đã đối chiếu với dự toán được duyệt."}
)

// demoGraph is the definition the demo contracts pin, walked.
type demoGraph struct {
	def        *workflowdesigner.Definition
	steps      map[string]workflowdesigner.Step
	normal     []string // from the initial phase along the normal moves, bypass false, to a terminal phase
	reject     string   // the terminal phase of the reject move furthest along normal
	rejectFrom string
}

func newDemoGraph(def *workflowdesigner.Definition) (*demoGraph, error) {
	g := &demoGraph{def: def, steps: map[string]workflowdesigner.Step{}}
	for _, s := range def.Steps {
		g.steps[s.Phase] = s
	}
	g.normal = g.walk(false)
	if len(g.normal) < 3 {
		return nil, fmt.Errorf("workflow %s v%d: the normal path %v is too short for demo data", def.Key, def.Version, g.normal)
	}
	for _, p := range g.normal {
		for _, t := range def.Transitions {
			if t.From == p && t.Kind == workflowdesigner.Reject && g.steps[t.To].Terminal {
				g.rejectFrom, g.reject = p, t.To
			}
		}
	}
	return g, nil
}

func (g *demoGraph) walk(bypass bool) []string {
	out := []string{g.def.InitialPhase}
	for p := g.def.InitialPhase; !g.steps[p].Terminal && len(out) <= len(g.steps); {
		t, ok := g.def.NormalMove(p, workflowdesigner.Facts{FactBypass: bypass})
		if !ok {
			break
		}
		p = t.To
		out = append(out, p)
	}
	return out
}

// path is the phases a contract went through to reach phase.
func (g *demoGraph) path(phase string, bypass bool) []string {
	walked := g.walk(bypass)
	if phase == g.reject {
		if i := slices.Index(walked, g.rejectFrom); i >= 0 {
			return append(slices.Clone(walked[:i+1]), g.reject)
		}
	}
	if i := slices.Index(walked, phase); i >= 0 {
		return walked[:i+1]
	}
	return walked
}

// mover is the role that makes the move from → to; "" when the drafter
// may (the contract's own drafter moves it).
func (g *demoGraph) mover(from, to string) string {
	for _, t := range g.def.Transitions {
		if t.From == from && t.To == to {
			if slices.Contains(t.Roles, "Drafter") || len(t.Roles) == 0 {
				return ""
			}
			return t.Roles[0]
		}
	}
	return ""
}

type demoShare struct {
	phase string
	share int
}

// shares is the phase mix over this graph.
func (g *demoGraph) shares() []demoShare {
	var out []demoShare
	left := 100
	for i, p := range g.normal {
		share := demoFinishedShare
		if i < len(g.normal)-1 {
			share = demoPathShares[min(i, len(demoPathShares)-1)]
		}
		share = min(share, left)
		out = append(out, demoShare{p, share})
		left -= share
	}
	if g.reject != "" && left > 0 {
		out = append(out, demoShare{g.reject, left})
	} else if left > 0 {
		out[len(out)-1].share += left
	}
	return out
}

func pickDemoPhase(shares []demoShare, n int) string {
	for _, p := range shares {
		if n < p.share {
			return p.phase
		}
		n -= p.share
	}
	return shares[0].phase
}

// demoValue is a contract value in hundredths of VND: 20 million to 20
// billion, log-uniform, rounded to thousands.
func demoValue(r *rand.Rand) int64 {
	v := math.Exp(math.Log(2e7) + r.Float64()*(math.Log(2e10)-math.Log(2e7)))
	return int64(v/1000) * 1000 * 100
}

var (
	demoContractColumns = []string{"id", "title", "contract_type", "supplier_id", "project_id", "department_id", "value", "currency",
		"bypass_procurement_and_ccm", "phase", "sla_deadline", "sla_warning_sent", "ma_hop_dong", "search_text", "draft_data", "drafter_id",
		"workflow_definition_id", "history_hash", "description", "start_date", "end_date", "version", "created_at", "created_by",
		"updated_at", "updated_by", "deleted_at", "deleted_by"}
	demoApprovalColumns = []string{"id", "contract_id", "from_phase", "to_phase", "approver_user_id", "decision", "comment", "approved_at", "hash", "prev_hash"}
	demoCommentColumns  = []string{"id", "contract_id", "phase", "content", "author_id", "created_at"}
)

// SeedDemoSet adds set.Size.Contracts demo contracts unless the first is
// there already, then tells the budget module which live contracts wait in
// DangKiemTraCCM without a budget line and how to name one on them.
func (s *Service) SeedDemoSet(ctx context.Context, set *kernel.DemoSet) error {
	r := set.Rand(2)
	first := kernel.NewID(set.Rand(2), 0)
	var have int64
	if err := s.DB.Conn(ctx).Model(&Contract{}).Where("id = ?", first).Count(&have).Error; err != nil {
		return err
	}
	if have == 0 {
		if err := s.insertDemoContracts(ctx, set, r); err != nil {
			return err
		}
		// File the set in the search index by phase now rather than in
		// the server's first seconds.
		if s.store.parts != nil {
			if err := s.store.parts.Sync(ctx); err != nil {
				return err
			}
		}
	}
	var waiting []struct {
		ID, ProjectID string
		Value         int64
	}
	if err := s.DB.Conn(ctx).Model(&Contract{}).Select("id", "project_id", "value").
		Where("phase = ? AND deleted_at IS NULL AND budget_line_id IS NULL AND project_id IS NOT NULL", DangKiemTraCCM).
		Order("id").Scan(&waiting).Error; err != nil {
		return err
	}
	for _, w := range waiting {
		set.AwaitingBudget = append(set.AwaitingBudget, kernel.DemoContract{ID: w.ID, ProjectID: w.ProjectID, Value: w.Value})
	}
	set.NameBudgetLines = s.nameDemoBudgetLines
	return nil
}

// nameDemoBudgetLines names a budget line on demo contracts, as a drafter
// choosing the line would before the CostControl check.
func (s *Service) nameDemoBudgetLines(ctx context.Context, lineByContract map[string]string) error {
	ids := make([]string, 0, len(lineByContract))
	for id := range lineByContract {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		for _, id := range ids {
			if err := s.DB.Conn(ctx).Exec("UPDATE contracts SET budget_line_id = ? WHERE id = ?", lineByContract[id], id).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Service) insertDemoContracts(ctx context.Context, set *kernel.DemoSet, r *rand.Rand) error {
	def, err := s.Workflows.ForDocumentType(ctx, documentType(ContractTypes[0]))
	if err != nil {
		return fmt.Errorf("the contracts' workflow: %w", err)
	}
	g, err := newDemoGraph(def)
	if err != nil {
		return err
	}
	if len(set.Suppliers) == 0 || len(set.Projects) == 0 {
		return fmt.Errorf("no demo suppliers or projects to attach contracts to")
	}
	shares := g.shares()
	bypassable := map[string]bool{}
	for _, p := range g.walk(true) {
		bypassable[p] = true
	}
	drafters := append(slices.Clone(set.UsersByRole["Drafter"]), set.UsersByRole["DeptManager"]...)
	if len(drafters) == 0 {
		return fmt.Errorf("no demo drafters")
	}
	pick := func(role string) string {
		us := set.UsersByRole[role]
		if len(us) == 0 {
			return drafters[0]
		}
		return us[r.IntN(len(us))]
	}
	// The codes go on from the sequences' current values.
	var seqRows []struct {
		Prefix  string
		LastSeq int
	}
	if err := s.DB.Conn(ctx).Table("contract_code_sequences").Select("prefix", "last_seq").Scan(&seqRows).Error; err != nil {
		return err
	}
	seqs, before := map[string]int{}, map[string]bool{}
	for _, q := range seqRows {
		seqs[q.Prefix], before[q.Prefix] = q.LastSeq, true
	}
	now := set.Now
	span, recent := int64(730*24*time.Hour), int64(120*24*time.Hour)
	seq := 0
	for from := 0; from < set.Size.Contracts; from += demoChunk {
		var cRows, aRows, mRows [][]any
		for range min(demoChunk, set.Size.Contracts-from) {
			id := kernel.NewID(r, seq)
			seq++
			phase := pickDemoPhase(shares, r.IntN(100))
			ctype := ContractTypes[r.IntN(len(ContractTypes))]
			framework := isFramework(ctype)
			bypass := bypassable[phase] && r.IntN(10) == 0
			terminal := g.steps[phase].Terminal
			var created time.Time
			if terminal {
				created = now.Add(-time.Duration(int64(3*24*time.Hour) + r.Int64N(span)))
			} else {
				created = now.Add(-time.Duration(int64(time.Hour) + r.Int64N(recent)))
			}
			created = created.Truncate(time.Microsecond)
			path := g.path(phase, bypass)
			moves := len(path) - 1
			step := min(now.Sub(created)/time.Duration(moves+1), 6*24*time.Hour)
			drafter := drafters[r.IntN(len(drafters))]
			var proj *kernel.DemoProject
			if !framework || r.IntN(2) == 0 {
				proj = &set.Projects[kernel.Skewed(r, len(set.Projects))]
			}
			var projectID, deptID any
			if proj != nil {
				projectID = proj.ID
			}
			if r.IntN(5) > 0 && len(set.Departments) > 0 {
				deptID = set.Departments[r.IntN(len(set.Departments))]
			}
			at, sealedAt, lastBy, head := created, created, drafter, ""
			for j := 1; j <= moves; j++ {
				at = at.Add(step/2 + time.Duration(r.Int64N(int64(step/2)+1))).Truncate(time.Microsecond)
				to := path[j]
				by := drafter
				if role := g.mover(path[j-1], to); role != "" {
					by = pick(role)
				}
				decision, comment := workflowdesigner.DecisionApprove, ""
				if to == g.reject {
					decision, comment = workflowdesigner.DecisionReject, "Giá trị vượt dự toán được duyệt; đề nghị đàm phán lại."
				}
				approver := by
				link := workflowdesigner.Link{DocumentID: id, From: path[j-1], To: to, ApproverID: &approver, Decision: decision, Comment: comment, At: at}
				hash := link.Hash(head)
				aRows = append(aRows, []any{kernel.NewID(r, seq), id, path[j-1], to, by, decision, comment, at, hash, head})
				seq++
				head, lastBy = hash, by
				if to == DangDongDau {
					sealedAt = at
				}
			}
			var deadline, code, deletedAt, deletedBy any
			ready := false
			switch {
			case terminal:
			case phase == g.def.InitialPhase && r.IntN(100) > 0: // ready to move on
				ready = true
				deadline = now.Add(time.Hour + time.Duration(r.Int64N(int64(160*time.Hour)))).Truncate(time.Microsecond)
			case r.IntN(5) == 0: // overdue
				deadline = now.Add(-time.Hour - time.Duration(r.Int64N(int64(5*24*time.Hour)))).Truncate(time.Microsecond)
			default:
				deadline = now.Add(time.Hour + time.Duration(r.Int64N(int64(max(1, g.steps[phase].SLAHours))*int64(time.Hour)))).Truncate(time.Microsecond)
			}
			if !ready && (phase == g.normal[0] || phase == g.normal[1]) && r.IntN(100) == 0 {
				deletedAt, deletedBy = at.Add(time.Hour), drafter
			}
			var codeText *string
			if phase != g.reject && slices.Contains(path, DangDongDau) {
				head := fmt.Sprint(sealedAt.In(s.Location).Year())
				if !framework {
					head = proj.Code
				}
				prefix := head + "-" + typeCodes[ctype]
				seqs[prefix]++
				c := fmt.Sprintf("%s-%03d", prefix, seqs[prefix])
				code, codeText = c, &c
			}
			if r.IntN(10) < 3 {
				for k := range 1 + r.IntN(2) {
					when := created.Add(time.Duration(r.Int64N(int64(at.Sub(created)) + 1))).Truncate(time.Microsecond)
					mRows = append(mRows, []any{kernel.NewID(r, seq), id, path[r.IntN(len(path))],
						demoComments[(k+r.IntN(len(demoComments)))%len(demoComments)], drafter, when})
					seq++
				}
			}
			start := created.AddDate(0, 0, 15)
			title := fmt.Sprintf("%s %s %s", demoTitleKinds[r.IntN(len(demoTitleKinds))], kernel.DemoWorkItems[r.IntN(len(kernel.DemoWorkItems))],
				kernel.DemoZones[r.IntN(len(kernel.DemoZones))])
			if proj != nil {
				title += " – " + proj.Code
			}
			cRows = append(cRows, []any{id, title, ctype, set.Suppliers[kernel.Skewed(r, len(set.Suppliers))], projectID, deptID,
				demoValue(r), "VND", bypass, phase, deadline, false, code, searchText(title, codeText), "{}", drafter, def.ID, head, "",
				start.Format(time.DateOnly), start.AddDate(0, 6+r.IntN(13), 0).Format(time.DateOnly),
				1 + moves, created, drafter, at, lastBy, deletedAt, deletedBy})
		}
		err := s.DB.InTx(ctx, func(ctx context.Context) error {
			if err := s.DB.InsertRows(ctx, "contracts", demoContractColumns, cRows); err != nil {
				return err
			}
			if err := s.DB.InsertRows(ctx, "contract_approvals", demoApprovalColumns, aRows); err != nil {
				return err
			}
			return s.DB.InsertRows(ctx, "contract_comments", demoCommentColumns, mRows)
		})
		if err != nil {
			if strings.Contains(err.Error(), "fts5") {
				err = fmt.Errorf("%w (the search triggers need FTS5: build with -tags sqlite_fts5)", err)
			}
			return err
		}
	}
	return s.DB.InTx(ctx, func(ctx context.Context) error {
		for prefix, n := range seqs {
			q := "INSERT INTO contract_code_sequences (prefix, last_seq) VALUES (?, ?)"
			args := []any{prefix, n}
			if before[prefix] {
				q, args = "UPDATE contract_code_sequences SET last_seq = ? WHERE prefix = ?", []any{n, prefix}
			}
			if err := s.DB.Conn(ctx).Exec(q, args...).Error; err != nil {
				return err
			}
		}
		return nil
	})
}
