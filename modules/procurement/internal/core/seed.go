package core

import (
	"context"
	"fmt"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/money"
)

// demo is one demo evaluation: its quotations (supplier code, amount in
// units), the winner's index and the moves that bring it to its phase.
type demo struct {
	title, project, category string
	policy                   string
	estimated                int64
	quotes                   []demoQuote
	winner                   int // -1: none chosen yet
	reason                   string
	opinions                 []string // kinds saved before the moves after ChoYKienPhongBan
	moves                    []demoMove
}

type demoQuote struct {
	supplier       string
	amount         int64
	days, warranty int
}

type demoMove struct{ to, comment string }

func demos() []demo {
	q := func(supplier string, amount int64, days, warranty int) demoQuote {
		return demoQuote{supplier, amount, days, warranty}
	}
	return []demo{
		{title: "Mua thép xây dựng đợt 1 - An Phú Residence", project: "DA001", category: "Material", policy: PolicyA, estimated: 180_000_000,
			quotes: []demoQuote{q("NCC002", 172_500_000, 10, 12), q("NCC001", 176_000_000, 7, 12)}, winner: -1},
		{title: "Thuê máy đào cho san lấp mặt bằng - Mỹ Phước 3", project: "DA002", category: "Equipment", policy: PolicyA, estimated: 95_000_000,
			quotes: []demoQuote{q("NCC005", 92_000_000, 5, 0)}, winner: 0, moves: []demoMove{{ChoDuAn, ""}}},
		{title: "Mua xi măng PCB40 - An Phú Residence", project: "DA001", category: "Material", policy: PolicyA, estimated: 240_000_000,
			quotes: []demoQuote{q("NCC001", 231_000_000, 5, 0), q("NCC002", 238_400_000, 7, 0)}, winner: 0,
			moves: []demoMove{{ChoDuAn, ""}, {ChoCEODuyetNCC, "Đồng ý đơn giá."}, {DaDuyet, "Duyệt nhà cung cấp."}}},
		{title: "Thầu phụ phần thô khối B - An Phú Residence", project: "DA001", category: "Subcontract", policy: PolicyB, estimated: 4_800_000_000,
			quotes: []demoQuote{q("NCC003", 4_650_000_000, 180, 24), q("NCC001", 4_720_000_000, 200, 24), q("NCC002", 4_790_000_000, 170, 12)},
			winner: 0, opinions: []string{"PRO"}, moves: []demoMove{{ChoDuAn, ""}, {ChoYKienPhongBan, "Chuyển các phòng cho ý kiến."}}},
		{title: "Dịch vụ vệ sinh công nghiệp - Mỹ Phước 3", project: "DA002", category: "Service", policy: PolicyB, estimated: 620_000_000,
			quotes: []demoQuote{q("NCC004", 598_000_000, 30, 0), q("NCC006", 585_000_000, 30, 0), q("NCC003", 640_000_000, 25, 0)},
			winner: 0, reason: "Đơn vị đã làm tốt ở dự án trước, có đội ngũ tại chỗ.", opinions: []string{"PRO", "CCM", "FIN"},
			moves: []demoMove{{ChoDuAn, ""}, {ChoYKienPhongBan, ""}, {ChoCCMKiemTra, "Đủ ý kiến các phòng."}}},
		{title: "Tư vấn giám sát thi công - An Phú Residence", project: "DA001", category: "Service", policy: PolicyB, estimated: 750_000_000,
			quotes: []demoQuote{q("NCC006", 735_000_000, 0, 0), q("NCC003", 760_000_000, 0, 0), q("NCC004", 790_000_000, 0, 0)},
			winner: 0, opinions: []string{"PRO", "CCM", "FIN"},
			moves: []demoMove{{ChoDuAn, ""}, {ChoYKienPhongBan, ""}, {ChoCCMKiemTra, ""}, {ChoCEODuyetNCC, ""}, {TuChoi, "Đơn giá vượt ngân sách dự án."}}},
	}
}

// SeedDemo adds the demo evaluations (seed.demo) in several phases of both
// policies, on the demo suppliers and projects of master data, as the first
// administrator. An evaluation whose title exists (even deleted) is skipped,
// so it runs at every start; without the demo master data it adds nothing.
func (s *Service) SeedDemo(ctx context.Context) error {
	admins, err := s.Directory.UserIDsInRoles(ctx, []string{identity.RoleAdmin})
	if err != nil || len(admins) == 0 {
		return err
	}
	p := authn.Principal{UserID: admins[0], Name: "Administrator", Roles: []string{identity.RoleAdmin}}
	all := demos()
	titles := make([]string, len(all))
	for i, d := range all {
		titles[i] = d.title
	}
	done, err := s.store.titled(ctx, titles)
	if err != nil {
		return err
	}
	ids := map[string]string{}
	find := func(code string, search func(context.Context, string, int) ([]string, error)) (string, error) {
		if id, ok := ids[code]; ok {
			return id, nil
		}
		found, err := search(ctx, code, 1)
		if err != nil || len(found) == 0 {
			return "", err
		}
		ids[code] = found[0]
		return found[0], nil
	}
	for _, d := range all {
		if done[d.title] {
			continue
		}
		project, err := find(d.project, s.MasterData.SearchProjectIDs)
		if err != nil || project == "" {
			return err
		}
		err = s.DB.InTx(ctx, func(ctx context.Context) error { return s.seedOne(ctx, p, d, project, find) })
		if err != nil {
			return fmt.Errorf("demo evaluation %q: %w", d.title, err)
		}
	}
	return nil
}

func (s *Service) seedOne(ctx context.Context, p authn.Principal, d demo, project string,
	find func(string, func(context.Context, string, int) ([]string, error)) (string, error)) error {
	category := d.category
	e, err := s.Create(ctx, p, CreateRequest{Title: d.title, Policy: d.policy, ProjectID: project, Category: &category,
		EstimatedValue: money.FromUnits(d.estimated), Description: "Phiếu đánh giá mẫu (seed.demo).",
		PaymentTerms: []PaymentTerm{{Milestone: "Tạm ứng", Percent: money.FromUnits(30)}, {Milestone: "Nghiệm thu", Percent: money.FromUnits(70)}}})
	if err != nil {
		return err
	}
	for _, q := range d.quotes {
		supplier, err := find(q.supplier, s.MasterData.SearchSupplierIDs)
		if err != nil || supplier == "" {
			return err
		}
		days, warranty := q.days, q.warranty
		if e, err = s.AddQuotation(ctx, p, e.ID, QuotationRequest{SupplierID: supplier, Amount: money.FromUnits(q.amount),
			DeliveryDays: &days, WarrantyMonths: &warranty}); err != nil {
			return err
		}
	}
	if d.winner >= 0 {
		winner := ""
		for _, q := range e.Quotations {
			if q.Supplier != nil && q.Supplier.Code == d.quotes[d.winner].supplier {
				winner = q.ID
			}
		}
		if _, err := s.SelectWinner(ctx, p, e.ID, WinnerRequest{QuotationID: winner, Reason: d.reason}); err != nil {
			return err
		}
	}
	for _, m := range d.moves {
		if m.to == ChoCCMKiemTra {
			for _, kind := range d.opinions {
				if _, err := s.SaveOpinion(ctx, p, e.ID, kind, OpinionRequest{Verdict: "Agree", Comment: "Thống nhất."}); err != nil {
					return err
				}
			}
		}
		if _, err := s.Transition(ctx, p, e.ID, TransitionRequest{ToPhase: m.to, Comment: m.comment}); err != nil {
			return err
		}
	}
	if e, err := s.load(ctx, e.ID); err == nil && e.Phase == ChoYKienPhongBan {
		for _, kind := range d.opinions {
			if _, err := s.SaveOpinion(ctx, p, e.ID, kind, OpinionRequest{Verdict: "AgreeWithConditions", Comment: "Đề nghị kiểm tra lại tiến độ giao hàng."}); err != nil {
				return err
			}
		}
	}
	return nil
}
