package core

import (
	"context"
	"fmt"
	"time"

	"github.com/contractflow/contractflow/platform/kernel"
)

// SeedDemoSet adds the bulk demo suppliers, projects and departments
// (contractflow seed --demo-size) through Import, which validates each as
// POST does and skips codes already used, then hands their ids, in code
// order, to the modules after it.
func (s *Service) SeedDemoSet(ctx context.Context, set *kernel.DemoSet) error {
	sz := set.Size
	places := kernel.DemoPlaces
	depts := []string{"Phòng Kỹ thuật", "Phòng Kế hoạch", "Phòng Mua hàng", "Phòng Tài chính", "Phòng Kế toán", "Ban Chỉ huy công trường", "Phòng Thiết bị", "Phòng Pháp chế"}
	var ds []DepartmentInput
	var dcodes []string
	for i := range sz.Departments {
		code := fmt.Sprintf("PB%02d", i+1)
		ds = append(ds, DepartmentInput{Head: Head{Code: code, Name: fmt.Sprintf("%s %d", depts[i%len(depts)], i/len(depts)+1)}})
		dcodes = append(dcodes, code)
	}
	statuses := []string{"Active", "Active", "Active", "Planning", "Closed"}
	var ps []ProjectInput
	var pcodes []string
	for i := range sz.Projects {
		code := fmt.Sprintf("DA%03d", i+1)
		start := time.Date(2023+i%4, time.Month(1+i%12), 1+i%27, 0, 0, 0, 0, time.UTC)
		ps = append(ps, ProjectInput{Head: Head{Code: code, Name: fmt.Sprintf("Dự án khu đô thị %s %d", places[i%len(places)], i+1)},
			Client: text("Chủ đầu tư " + places[(i+3)%len(places)]), Location: text(places[i%len(places)]), Status: statuses[i%len(statuses)],
			StartDate: text(start.Format(time.DateOnly)), EndDate: text(start.AddDate(2, 0, 0).Format(time.DateOnly))})
		pcodes = append(pcodes, code)
	}
	types := []string{"Material", "Subcontractor", "Service", "Equipment", "Consultant"}
	kinds := []string{"Công ty TNHH Xây dựng", "Công ty CP Vật liệu", "Công ty TNHH Thiết bị", "Công ty CP Tư vấn", "Công ty TNHH Thương mại"}
	var ss []SupplierInput
	var scodes []string
	for i := range sz.Suppliers {
		code := fmt.Sprintf("NCC%04d", i+1)
		ss = append(ss, SupplierInput{Head: Head{Code: code, Name: fmt.Sprintf("%s %s %d", kinds[i%len(kinds)], places[(i/5)%len(places)], i+1)},
			SupplierType: types[i%len(types)], TaxCode: text(fmt.Sprintf("03%08d", i+1)),
			Address: text(fmt.Sprintf("%d Đường số %d, %s", 10+i%90, 1+i%30, places[i%len(places)])), Phone: text(fmt.Sprintf("028%08d", i+1)),
			Email: text(fmt.Sprintf("lienhe%04d@ncc.example", i+1)), ContactPerson: text(kernel.DemoPerson(i))})
		scodes = append(scodes, code)
	}
	if _, err := s.Import(ctx, ss, ps, ds); err != nil {
		return err
	}
	var err error
	if set.Suppliers, _, err = s.demoIDs(ctx, "suppliers", scodes); err != nil {
		return err
	}
	if set.Departments, _, err = s.demoIDs(ctx, "departments", dcodes); err != nil {
		return err
	}
	pids, pcodes, err := s.demoIDs(ctx, "projects", pcodes)
	if err != nil {
		return err
	}
	for i, id := range pids {
		set.Projects = append(set.Projects, kernel.DemoProject{ID: id, Code: pcodes[i]})
	}
	return nil
}

// demoIDs returns the ids of the live rows of table with codes, in the
// codes' order; a code without a live row (deleted by a user) is left out.
func (s *Service) demoIDs(ctx context.Context, table string, codes []string) (ids, kept []string, err error) {
	byCode := make(map[string]string, len(codes))
	for start := 0; start < len(codes); start += 500 {
		var rows []struct{ ID, Code string }
		if err := s.db.Conn(ctx).Table(table).Select("id", "code").Where("code IN ? AND deleted_at IS NULL", codes[start:min(start+500, len(codes))]).
			Scan(&rows).Error; err != nil {
			return nil, nil, err
		}
		for _, r := range rows {
			byCode[r.Code] = r.ID
		}
	}
	for _, c := range codes {
		if id, ok := byCode[c]; ok {
			ids, kept = append(ids, id), append(kept, c)
		}
	}
	if len(ids) == 0 {
		return nil, nil, fmt.Errorf("no demo %s", table)
	}
	return ids, kept, nil
}
