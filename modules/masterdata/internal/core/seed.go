package core

import "context"

// SeedDemo adds the demo suppliers, projects and departments of a
// construction company (seed.demo). Codes already used, even by a deleted
// record, are skipped, so it can run at every start.
func (s *Service) SeedDemo(ctx context.Context) error {
	_, err := s.Import(ctx, demoSuppliers(), demoProjects(), demoDepartments())
	return err
}

func text(s string) *string { return &s }

func demoSuppliers() []SupplierInput {
	sup := func(code, name, typ, tax, address, phone, email, contact string) SupplierInput {
		return SupplierInput{Head: Head{Code: code, Name: name}, SupplierType: typ, TaxCode: text(tax),
			Address: text(address), Phone: text(phone), Email: text(email), ContactPerson: text(contact)}
	}
	return []SupplierInput{
		sup("NCC001", "Công ty TNHH Vật liệu Xây dựng Minh Phát", "Material", "0312345678",
			"128 Nguyễn Văn Linh, Phường Tân Thuận Tây, Quận 7, TP. Hồ Chí Minh", "028 3773 1234", "kinhdoanh@minhphat.vn", "Nguyễn Văn Minh"),
		sup("NCC002", "Công ty Cổ phần Thép Hòa Bình", "Material", "0101234567",
			"Km 12 Quốc lộ 5, Gia Lâm, Hà Nội", "024 3678 5566", "sales@thephoabinh.vn", "Trần Thị Hoa"),
		sup("NCC003", "Công ty Cổ phần Xây lắp Thành Công", "Subcontractor", "0309876543",
			"45 Điện Biên Phủ, Phường 15, Quận Bình Thạnh, TP. Hồ Chí Minh", "028 3512 7788", "info@xaylapthanhcong.vn", "Lê Quốc Thành"),
		sup("NCC004", "Công ty TNHH Dịch vụ Vệ sinh Công nghiệp Sao Mai", "Service", "0315566778",
			"22 Lũy Bán Bích, Quận Tân Phú, TP. Hồ Chí Minh", "028 3860 2468", "lienhe@saomai-cleaning.vn", "Phạm Thu Trang"),
		sup("NCC005", "Công ty TNHH Thiết bị Cơ giới Đông Á", "Equipment", "0401234567-001",
			"Lô B3 KCN Hòa Khánh, Liên Chiểu, Đà Nẵng", "0236 3731 999", "thietbi@dongamachinery.vn", "Võ Đức Anh"),
		sup("NCC006", "Công ty Cổ phần Tư vấn Thiết kế Kiến trúc Việt", "Consultant", "0107654321",
			"18 Láng Hạ, Đống Đa, Hà Nội", "024 3514 3579", "tuvan@kientrucviet.vn", "Đỗ Minh Khoa"),
	}
}

func demoProjects() []ProjectInput {
	prj := func(code, name, client, location, status, start, end string) ProjectInput {
		return ProjectInput{Head: Head{Code: code, Name: name}, Client: text(client), Location: text(location),
			Status: status, StartDate: text(start), EndDate: text(end)}
	}
	return []ProjectInput{
		prj("DA001", "Khu căn hộ An Phú Residence", "Công ty CP Đầu tư Bất động sản An Phú",
			"Phường An Phú, TP. Thủ Đức, TP. Hồ Chí Minh", "Active", "2026-01-15", "2027-12-31"),
		prj("DA002", "Nhà xưởng KCN Mỹ Phước 3", "Công ty TNHH Cơ khí Chính xác Mỹ Phước",
			"KCN Mỹ Phước 3, Bến Cát, Bình Dương", "Planning", "2026-06-01", "2027-03-31"),
		prj("DA003", "Trường Tiểu học Hòa Bình", "Ban QLDA Đầu tư Xây dựng Quận 8",
			"Phường 5, Quận 8, TP. Hồ Chí Minh", "Closed", "2024-03-01", "2025-08-15"),
	}
}

func demoDepartments() []DepartmentInput {
	dep := func(code, name string) DepartmentInput { return DepartmentInput{Head: Head{Code: code, Name: name}} }
	return []DepartmentInput{
		dep("PRO", "Phòng Mua hàng"),
		dep("CCM", "Phòng Kiểm soát Chi phí"),
		dep("FIN", "Phòng Tài chính"),
		dep("ACT", "Phòng Kế toán"),
		dep("EQU", "Phòng Thiết bị"),
		dep("HCNS", "Phòng Hành chính Nhân sự"),
		dep("QLDA", "Ban Quản lý Dự án"),
	}
}
