package main

// contract describes one Word template: a Vietnamese construction-company
// contract with the usual skeleton (national heading, title, legal bases,
// the two parties, numbered articles, signatures). Placeholders are written
// {{name}}; the forms module's seed lists the same names in each record's
// fieldSpec, and a test checks that the two agree.
type contract struct {
	Code, File   string
	Title        string
	RoleA, RoleB string   // what each party is called in this kind of contract
	Bases        []string // legal bases ("Căn cứ …")
	Articles     []article
}

type article struct {
	Heading string
	Paras   []string
}

// Legal bases shared by the templates.
const (
	baseCivil        = "Căn cứ Bộ luật Dân sự số 91/2015/QH13 ngày 24/11/2015;"
	baseCommerce     = "Căn cứ Luật Thương mại số 36/2005/QH11 ngày 14/6/2005;"
	baseConstruction = "Căn cứ Luật Xây dựng số 50/2014/QH13 ngày 18/6/2014 và Luật số 62/2020/QH14 sửa đổi, bổ sung một số điều của Luật Xây dựng;"
	baseDecree37     = "Căn cứ Nghị định số 37/2015/NĐ-CP ngày 22/4/2015 của Chính phủ quy định chi tiết về hợp đồng xây dựng và Nghị định số 50/2021/NĐ-CP sửa đổi, bổ sung;"
	baseNeeds        = "Căn cứ nhu cầu và khả năng của hai bên,"
)

// Articles shared by several templates.
var (
	valueArticle = article{"Giá trị hợp đồng", []string{
		"Giá trị hợp đồng: **{{contract¦Value}}** đồng (đã bao gồm thuế giá trị gia tăng {{vatRate}}%).",
		"Bằng chữ: //{{ contractValueInWords }}//.",
		"Giá trị hợp đồng chỉ được điều chỉnh khi có phát sinh được hai bên thống nhất bằng văn bản (phụ lục hợp đồng).",
	}}
	paymentArticle = article{"Tạm ứng và thanh toán", []string{
		"Bên A tạm ứng cho Bên B {{advancePercent}}% giá trị hợp đồng trong vòng 07 ngày làm việc kể từ ngày hợp đồng có hiệu lực và Bên B nộp bảo lãnh tạm ứng có giá trị tương đương.",
		"Phương thức thanh toán: {{paymentTerms}}",
		"Hồ sơ thanh toán gồm: biên bản nghiệm thu khối lượng hoàn thành, bảng xác định giá trị đề nghị thanh toán và hóa đơn giá trị gia tăng hợp lệ. Thanh toán bằng chuyển khoản vào tài khoản của Bên B ghi tại hợp đồng này.",
	}}
	durationArticle = article{"Thời gian thực hiện", []string{
		"Thời gian thực hiện hợp đồng từ ngày {{startDate}} đến ngày {{endDate}} ({{durationDays}} ngày).",
		"Bên B lập tiến độ chi tiết trình Bên A chấp thuận trong vòng 05 ngày kể từ ngày ký hợp đồng và thực hiện đúng tiến độ đã được chấp thuận.",
	}}
	safetyArticle = article{"An toàn lao động và vệ sinh môi trường", []string{
		"Bên B chịu trách nhiệm về an toàn lao động, phòng chống cháy nổ và vệ sinh môi trường trong phạm vi công việc của mình; trang bị đầy đủ bảo hộ lao động cho người lao động và tuân thủ nội quy công trường của Bên A.",
	}}
	dutiesArticle = article{"Quyền và nghĩa vụ của các bên", []string{
		"Bên A: cung cấp hồ sơ, mặt bằng và thông tin cần thiết; kiểm tra, nghiệm thu và thanh toán cho Bên B theo đúng hợp đồng.",
		"Bên B: thực hiện công việc đúng chất lượng, tiến độ và quy chuẩn hiện hành; chịu trách nhiệm về chất lượng công việc do mình thực hiện; không chuyển giao hợp đồng cho bên thứ ba khi chưa có chấp thuận bằng văn bản của Bên A.",
	}}
	penaltyArticle = article{"Phạt vi phạm và bồi thường thiệt hại", []string{
		"Bên vi phạm nghĩa vụ hợp đồng chịu phạt vi phạm với mức không vượt quá 12% giá trị phần hợp đồng bị vi phạm và bồi thường thiệt hại thực tế phát sinh theo quy định của pháp luật.",
	}}
	generalArticle = article{"Điều khoản chung", []string{
		"Mọi tranh chấp phát sinh được giải quyết trước hết bằng thương lượng; nếu không thương lượng được, một trong hai bên có quyền đưa tranh chấp ra Tòa án có thẩm quyền để giải quyết.",
		"Hợp đồng có hiệu lực kể từ ngày ký. Hợp đồng được lập thành 04 bản có giá trị pháp lý như nhau, mỗi bên giữ 02 bản.",
	}}
)

// warranty returns the warranty article; withRetention adds the retention
// money construction contracts keep back.
func warranty(withRetention bool) article {
	a := article{"Bảo hành", []string{
		"Thời gian bảo hành là {{warrantyMonths}} tháng kể từ ngày hai bên ký biên bản nghiệm thu, bàn giao.",
	}}
	if withRetention {
		a.Paras = append(a.Paras, "Bên A giữ lại {{retentionPercent}}% giá trị quyết toán làm bảo đảm bảo hành; khoản này được hoàn trả sau khi hết thời gian bảo hành và Bên B hoàn thành nghĩa vụ bảo hành.")
	}
	return a
}

var contracts = []contract{
	{
		Code: "HDTP-01", File: "HDTP-01.docx",
		Title: "HỢP ĐỒNG THẦU PHỤ THI CÔNG XÂY DỰNG", RoleA: "Nhà thầu chính", RoleB: "Nhà thầu phụ",
		Bases: []string{baseCivil, baseConstruction, baseDecree37, baseNeeds},
		Articles: []article{
			{"Phạm vi công việc", []string{
				"Bên A giao cho Bên B thi công: {{scopeOfWork}}",
				"Thuộc dự án: **{{projectName}}** (mã dự án {{projectCode}}); địa điểm xây dựng: {{projectLocation}}.",
				"Bên B thi công theo hồ sơ thiết kế bản vẽ thi công được duyệt, chỉ dẫn kỹ thuật và các quy chuẩn, tiêu chuẩn xây dựng hiện hành.",
			}},
			valueArticle, paymentArticle, durationArticle, warranty(true), safetyArticle, dutiesArticle, penaltyArticle, generalArticle,
		},
	},
	{
		Code: "HDGK-01", File: "HDGK-01.docx",
		Title: "HỢP ĐỒNG GIAO KHOÁN NHÂN CÔNG", RoleA: "Bên giao khoán", RoleB: "Bên nhận khoán",
		Bases: []string{baseCivil, baseConstruction, baseNeeds},
		Articles: []article{
			{"Nội dung công việc giao khoán", []string{
				"Bên A giao cho Bên B nhận khoán nhân công thực hiện: {{scopeOfWork}}",
				"Tại dự án: **{{projectName}}** (mã dự án {{projectCode}}); địa điểm: {{projectLocation}}.",
				"Số lượng nhân công bố trí tối thiểu: {{workerCount}} người; Bên B tự quản lý nhân công, dụng cụ cầm tay và chịu trách nhiệm về chất lượng công việc.",
			}},
			valueArticle, paymentArticle, durationArticle, warranty(false), safetyArticle, dutiesArticle, penaltyArticle, generalArticle,
		},
	},
	{
		Code: "NCC-01", File: "NCC-01.docx",
		Title: "HỢP ĐỒNG CUNG CẤP VẬT TƯ, VẬT LIỆU XÂY DỰNG", RoleA: "Bên mua", RoleB: "Bên bán (nhà cung cấp)",
		Bases: []string{baseCivil, baseCommerce, baseNeeds},
		Articles: []article{
			{"Hàng hóa", []string{
				"Bên B cung cấp cho Bên A: {{goodsDescription}}",
				"Chủng loại, quy cách, khối lượng và đơn giá chi tiết theo Phụ lục 01 – Bảng giá (biểu mẫu NCC-PL01) đính kèm, là bộ phận không tách rời của hợp đồng.",
				"Hàng hóa dùng cho dự án: **{{projectName}}** (mã dự án {{projectCode}}).",
			}},
			valueArticle,
			{"Giao nhận hàng hóa", []string{
				"Địa điểm giao hàng: {{deliveryAddress}}.",
				"Thời gian giao hàng từ ngày {{startDate}} đến ngày {{endDate}}, theo từng đợt do Bên A thông báo trước ít nhất 03 ngày.",
				"Hàng hóa được giao kèm chứng chỉ xuất xứ (CO), chứng chỉ chất lượng (CQ) và biên bản giao nhận có chữ ký của đại diện hai bên.",
			}},
			paymentArticle, warranty(false), penaltyArticle, generalArticle,
		},
	},
	{
		Code: "HDDV-01", File: "HDDV-01.docx",
		Title: "HỢP ĐỒNG DỊCH VỤ", RoleA: "Bên thuê dịch vụ", RoleB: "Bên cung cấp dịch vụ",
		Bases: []string{baseCivil, baseCommerce, baseNeeds},
		Articles: []article{
			{"Nội dung dịch vụ", []string{
				"Bên B cung cấp cho Bên A dịch vụ: {{serviceDescription}}",
				"Phục vụ dự án: **{{projectName}}** (mã dự án {{projectCode}}).",
				"Kết quả dịch vụ được nghiệm thu bằng biên bản có chữ ký của đại diện hai bên.",
			}},
			valueArticle, paymentArticle, durationArticle, dutiesArticle, penaltyArticle, generalArticle,
		},
	},
	{
		Code: "MB-01", File: "MB-01.docx",
		Title: "HỢP ĐỒNG MUA BÁN HÀNG HÓA", RoleA: "Bên mua", RoleB: "Bên bán",
		Bases: []string{baseCivil, baseCommerce, baseNeeds},
		Articles: []article{
			{"Hàng hóa mua bán", []string{
				"Bên B bán cho Bên A: {{goodsDescription}}",
				"Hàng hóa mới 100%, đúng chủng loại, quy cách và xuất xứ như chào giá; dùng cho dự án **{{projectName}}** (mã dự án {{projectCode}}).",
			}},
			valueArticle,
			{"Giao hàng", []string{
				"Bên B giao hàng tại {{deliveryAddress}} chậm nhất vào ngày {{deliveryDate}}.",
				"Chi phí vận chuyển, bốc dỡ đến địa điểm giao hàng do Bên B chịu. Quyền sở hữu và rủi ro đối với hàng hóa chuyển sang Bên A khi hai bên ký biên bản giao nhận.",
			}},
			paymentArticle, warranty(false), penaltyArticle, generalArticle,
		},
	},
	{
		Code: "HDKNCC-01", File: "HDKNCC-01.docx",
		Title: "HỢP ĐỒNG KHUNG CUNG CẤP VẬT TƯ", RoleA: "Bên mua", RoleB: "Bên bán (nhà cung cấp)",
		Bases: []string{baseCivil, baseCommerce, baseNeeds},
		Articles: []article{
			{"Đối tượng của hợp đồng khung", []string{
				"Bên B cung cấp cho Bên A các loại vật tư: {{goodsDescription}}",
				"Hợp đồng khung áp dụng cho các dự án do Bên A thi công trong thời gian hiệu lực. Từng lần mua được thực hiện bằng đơn đặt hàng của Bên A, ghi rõ dự án, chủng loại, khối lượng, thời gian và địa điểm giao hàng.",
			}},
			{"Giá trị ước tính và đơn giá", []string{
				"Giá trị ước tính của hợp đồng khung: **{{contract¦Value}}** đồng (đã bao gồm thuế giá trị gia tăng {{vatRate}}%).",
				"Bằng chữ: //{{ contractValueInWords }}//.",
				"Đơn giá áp dụng theo bảng giá đính kèm và được cố định trong thời gian hiệu lực, trừ khi hai bên thống nhất điều chỉnh bằng phụ lục.",
			}},
			{"Thời hạn hiệu lực", []string{
				"Hợp đồng khung có hiệu lực từ ngày {{validFrom}} đến ngày {{validTo}}.",
			}},
			{"Thanh toán", []string{
				"Phương thức thanh toán: {{paymentTerms}}",
				"Mỗi đơn đặt hàng được thanh toán riêng trên cơ sở biên bản giao nhận và hóa đơn giá trị gia tăng hợp lệ.",
			}},
			penaltyArticle, generalArticle,
		},
	},
	{
		Code: "HDKTP-01", File: "HDKTP-01.docx",
		Title: "HỢP ĐỒNG KHUNG THẦU PHỤ", RoleA: "Nhà thầu chính", RoleB: "Nhà thầu phụ",
		Bases: []string{baseCivil, baseConstruction, baseDecree37, baseNeeds},
		Articles: []article{
			{"Phạm vi hợp tác", []string{
				"Bên B nhận thầu phụ các loại công việc: {{workCategories}}",
				"Hợp đồng khung áp dụng cho các dự án do Bên A làm tổng thầu hoặc nhà thầu chính trong thời gian hiệu lực; từng gói việc được giao bằng lệnh giao việc kèm khối lượng, đơn giá và tiến độ.",
			}},
			{"Giá trị ước tính", []string{
				"Giá trị ước tính của hợp đồng khung: **{{contract¦Value}}** đồng (đã bao gồm thuế giá trị gia tăng {{vatRate}}%).",
				"Bằng chữ: //{{ contractValueInWords }}//.",
			}},
			{"Thời hạn hiệu lực", []string{
				"Hợp đồng khung có hiệu lực từ ngày {{validFrom}} đến ngày {{validTo}}.",
			}},
			{"Thanh toán", []string{
				"Phương thức thanh toán: {{paymentTerms}}",
			}},
			warranty(true), safetyArticle, dutiesArticle, penaltyArticle, generalArticle,
		},
	},
}

// header is the running head of every page.
func (c contract) header() string {
	return "{{partyAName}} – Hợp đồng số {{contract¦Code}}"
}

// footer precedes the page number field.
func (c contract) footer() string {
	return c.Code + " – Hợp đồng số {{contractCode}} – {{partyBName}} – Trang "
}

// body builds the document: heading, title, bases, parties, articles and
// the signature block.
func (c contract) body() []block {
	bl := []block{
		para{text: "**CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM**", align: "center", after: 1},
		para{text: "**Độc lập – Tự do – Hạnh phúc**", align: "center", after: 1},
		para{text: "———————", align: "center"},
		para{text: "//{{signingPlace}}, ngày {{contractDate}}//", align: "right"},
		para{text: c.Title, style: "Title"},
		para{text: "Số: {{contractCode}}", align: "center", after: 240},
	}
	for _, b := range c.Bases {
		bl = append(bl, para{text: "//" + b + "//"})
	}
	bl = append(bl,
		para{text: "Hôm nay, ngày {{contractDate}}, tại {{¦signing¦Place}}, chúng tôi gồm:"},
		parties(c.RoleA, c.RoleB),
		para{text: "Hai bên thống nhất ký kết hợp đồng với các điều khoản sau đây:"},
	)
	for i, a := range c.Articles {
		bl = append(bl, para{text: "Điều " + itoa(i+1) + ". " + a.Heading, style: "Heading1"})
		for _, p := range a.Paras {
			bl = append(bl, para{text: p})
		}
	}
	// Word ends a document with a paragraph, never with a table.
	return append(bl, signatures(), para{text: ""})
}

// parties is the table of the two parties' particulars.
func parties(roleA, roleB string) table {
	w := []int{2271, 3400, 3400}
	h := func(s string) cell {
		return cell{paras: []para{{text: "**" + s + "**", align: "center", after: 1}}, head: true}
	}
	c := func(s string) cell { return cell{paras: []para{{text: s, align: "left", after: 1}}} }
	return table{widths: w, borders: true, rows: [][]cell{
		{h("Thông tin"), h("BÊN A – " + roleA), h("BÊN B – " + roleB)},
		{c("Tên đơn vị"), c("**{{partyAName}}**"), c("**{{partyBName}}**")},
		{c("Địa chỉ"), c("{{partyAAddress}}"), c("{{partyBAddress}}")},
		{c("Mã số thuế"), c("{{partyATaxCode}}"), c("{{partyBTaxCode}}")},
		{c("Người đại diện"), c("{{partyARepresentative}}"), c("{{partyBRepresentative}}")},
		{c("Chức vụ"), c("{{partyAPosition}}"), c("{{partyBPosition}}")},
		{c("Tài khoản"), c("—"), c("{{partyBBankAccount}} tại {{partyBBankName}}")},
	}}
}

// signatures is the borderless signature block.
func signatures() table {
	half := textWidth / 2
	col := func(title, name string) cell {
		return cell{paras: []para{
			{text: "**" + title + "**", align: "center", after: 1},
			{text: "//(Ký, ghi rõ họ tên và đóng dấu)//", align: "center", after: 1200},
			{text: "**" + name + "**", align: "center"},
		}}
	}
	return table{widths: []int{half, textWidth - half}, cantSplit: true, rows: [][]cell{{
		col("ĐẠI DIỆN BÊN A", "{{partyARepresentative}}"),
		col("ĐẠI DIỆN BÊN B", "{{partyBRepresentative}}"),
	}}}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
