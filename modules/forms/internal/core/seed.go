package core

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/forms/internal/render"
	"github.com/contractflow/contractflow/platform/storage"
	"github.com/contractflow/contractflow/seeds/templates"
)

// catalog labels and types every placeholder the seeded templates use, so
// one field reads the same on every form.
var catalog = map[string]render.Field{
	"contractCode":         {Label: "Số hợp đồng"},
	"contractDate":         {Label: "Ngày ký hợp đồng", Type: render.Date},
	"signingPlace":         {Label: "Địa điểm ký"},
	"partyAName":           {Label: "Bên A – tên đơn vị"},
	"partyAAddress":        {Label: "Bên A – địa chỉ"},
	"partyATaxCode":        {Label: "Bên A – mã số thuế"},
	"partyARepresentative": {Label: "Bên A – người đại diện"},
	"partyAPosition":       {Label: "Bên A – chức vụ người đại diện"},
	"partyBName":           {Label: "Bên B – tên đơn vị"},
	"partyBAddress":        {Label: "Bên B – địa chỉ"},
	"partyBTaxCode":        {Label: "Bên B – mã số thuế"},
	"partyBRepresentative": {Label: "Bên B – người đại diện"},
	"partyBPosition":       {Label: "Bên B – chức vụ người đại diện"},
	"partyBBankAccount":    {Label: "Bên B – số tài khoản"},
	"partyBBankName":       {Label: "Bên B – ngân hàng"},
	"projectName":          {Label: "Tên dự án"},
	"projectCode":          {Label: "Mã dự án"},
	"projectLocation":      {Label: "Địa điểm xây dựng"},
	"scopeOfWork":          {Label: "Phạm vi công việc"},
	"workCategories":       {Label: "Các loại công việc thầu phụ"},
	"workerCount":          {Label: "Số nhân công tối thiểu", Type: render.Number},
	"goodsDescription":     {Label: "Hàng hóa, vật tư"},
	"serviceDescription":   {Label: "Nội dung dịch vụ"},
	"contractValue":        {Label: "Giá trị hợp đồng (đồng)", Type: render.Money},
	"contractValueInWords": {Label: "Giá trị hợp đồng bằng chữ"},
	"vatRate":              {Label: "Thuế suất GTGT (%)", Type: render.Number},
	"advancePercent":       {Label: "Tạm ứng (% giá trị hợp đồng)", Type: render.Number},
	"paymentTerms":         {Label: "Phương thức thanh toán"},
	"startDate":            {Label: "Ngày bắt đầu", Type: render.Date},
	"endDate":              {Label: "Ngày kết thúc", Type: render.Date},
	"durationDays":         {Label: "Thời gian thực hiện (ngày)", Type: render.Number},
	"warrantyMonths":       {Label: "Thời gian bảo hành (tháng)", Type: render.Number},
	"retentionPercent":     {Label: "Giữ lại bảo hành (% giá trị quyết toán)", Type: render.Number},
	"deliveryAddress":      {Label: "Địa điểm giao hàng"},
	"deliveryDate":         {Label: "Hạn giao hàng", Type: render.Date},
	"deliveryDays":         {Label: "Thời gian giao hàng (ngày)", Type: render.Number},
	"validFrom":            {Label: "Hiệu lực từ ngày", Type: render.Date},
	"validTo":              {Label: "Hiệu lực đến ngày", Type: render.Date},
	"validUntil":           {Label: "Báo giá có hiệu lực đến ngày", Type: render.Date},
	"totalInWords":         {Label: "Tổng cộng thanh toán bằng chữ"},
}

func init() {
	for i := 1; i <= 3; i++ {
		n := fmt.Sprint(i)
		catalog["item"+n+"Code"] = render.Field{Label: "Vật tư " + n + " – mã"}
		catalog["item"+n+"Name"] = render.Field{Label: "Vật tư " + n + " – tên, quy cách"}
		catalog["item"+n+"Unit"] = render.Field{Label: "Vật tư " + n + " – đơn vị tính"}
		catalog["item"+n+"Qty"] = render.Field{Label: "Vật tư " + n + " – khối lượng", Type: render.Number}
		catalog["item"+n+"Price"] = render.Field{Label: "Vật tư " + n + " – đơn giá (đồng)", Type: render.Money}
	}
}

// seedTemplate is one of the eight templates every installation starts with
// (DESIGN §6). Fields are listed in the order a form shows them; Required
// names the ones rendering cannot do without.
type seedTemplate struct {
	FormCode, Name, ContractType, File string
	Fields                             []string
	Required                           []string
}

// parties are the fields every contract names for its two parties.
var parties = []string{"contractCode", "contractDate", "signingPlace",
	"partyAName", "partyAAddress", "partyATaxCode", "partyARepresentative", "partyAPosition",
	"partyBName", "partyBAddress", "partyBTaxCode", "partyBRepresentative", "partyBPosition", "partyBBankAccount", "partyBBankName"}

func with(extra ...string) []string { return append(append([]string{}, parties...), extra...) }

var contractRequired = []string{"partyAName", "partyBName", "contractValue"}

var seedTemplates = []seedTemplate{
	{"HDTP-01", "Hợp đồng thầu phụ thi công xây dựng", "Subcontract", "HDTP-01.docx",
		with("scopeOfWork", "projectName", "projectCode", "projectLocation", "contractValue", "vatRate", "contractValueInWords",
			"advancePercent", "paymentTerms", "startDate", "endDate", "durationDays", "warrantyMonths", "retentionPercent"),
		contractRequired},
	{"HDGK-01", "Hợp đồng giao khoán nhân công", "PieceWork", "HDGK-01.docx",
		with("scopeOfWork", "projectName", "projectCode", "projectLocation", "workerCount", "contractValue", "vatRate",
			"contractValueInWords", "advancePercent", "paymentTerms", "startDate", "endDate", "durationDays", "warrantyMonths"),
		contractRequired},
	{"NCC-01", "Hợp đồng cung cấp vật tư, vật liệu xây dựng", "Supply", "NCC-01.docx",
		with("goodsDescription", "projectName", "projectCode", "contractValue", "vatRate", "contractValueInWords",
			"deliveryAddress", "startDate", "endDate", "advancePercent", "paymentTerms", "warrantyMonths"),
		contractRequired},
	{"HDDV-01", "Hợp đồng dịch vụ", "Service", "HDDV-01.docx",
		with("serviceDescription", "projectName", "projectCode", "contractValue", "vatRate", "contractValueInWords",
			"advancePercent", "paymentTerms", "startDate", "endDate", "durationDays"),
		contractRequired},
	{"MB-01", "Hợp đồng mua bán hàng hóa", "Purchase", "MB-01.docx",
		with("goodsDescription", "projectName", "projectCode", "contractValue", "vatRate", "contractValueInWords",
			"deliveryAddress", "deliveryDate", "advancePercent", "paymentTerms", "warrantyMonths"),
		contractRequired},
	{"HDKNCC-01", "Hợp đồng khung cung cấp vật tư", "FrameworkSupply", "HDKNCC-01.docx",
		with("goodsDescription", "contractValue", "vatRate", "contractValueInWords", "validFrom", "validTo", "paymentTerms"),
		contractRequired},
	{"HDKTP-01", "Hợp đồng khung thầu phụ", "FrameworkSubcontract", "HDKTP-01.docx",
		with("workCategories", "contractValue", "vatRate", "contractValueInWords", "validFrom", "validTo", "paymentTerms",
			"warrantyMonths", "retentionPercent"),
		contractRequired},
	{"NCC-PL01", "Phụ lục 01 – Bảng giá vật tư (kèm hợp đồng cung cấp)", "Supply", "NCC-PL01.xlsx",
		[]string{"contractCode", "contractDate", "partyAName", "partyBName", "partyBTaxCode", "projectName", "projectCode",
			"item1Code", "item1Name", "item1Unit", "item1Qty", "item1Price",
			"item2Code", "item2Name", "item2Unit", "item2Qty", "item2Price",
			"item3Code", "item3Name", "item3Unit", "item3Qty", "item3Price",
			"vatRate", "totalInWords", "deliveryAddress", "deliveryDays", "validUntil", "paymentTerms",
			"partyARepresentative", "partyBRepresentative"},
		[]string{"partyBName", "item1Name", "item1Qty", "item1Price"}},
}

// spec builds the fieldSpec of a seeded template from the catalog.
func (d seedTemplate) spec() []render.Field {
	out := make([]render.Field, 0, len(d.Fields))
	for _, name := range d.Fields {
		f := catalog[name]
		f.Name = name
		if f.Type == "" {
			f.Type = render.Text
		}
		for _, r := range d.Required {
			if r == name {
				f.Required = true
			}
		}
		out = append(out, f)
	}
	return out
}

// SeedSpecs returns the seeded templates' fieldSpecs by file name, for the
// test that checks them against the files' placeholders.
func SeedSpecs() map[string][]render.Field {
	out := map[string][]render.Field{}
	for _, d := range seedTemplates {
		out[d.File] = d.spec()
	}
	return out
}

// Seed inserts the seeded templates whose form code does not exist yet,
// copying each file from the binary into blob storage. A template whose
// file is not shipped (or does not pass the upload checks) is inserted
// switched off. Existing rows are never changed, so running it again
// changes nothing, and an administrator's edits survive upgrades.
func (s *Service) Seed(ctx context.Context) error {
	return s.seed(ctx, templates.Files)
}

func (s *Service) seed(ctx context.Context, files fs.FS) error {
	existing, err := s.store.formCodes(ctx)
	if err != nil {
		return err
	}
	for _, d := range seedTemplates {
		if existing[d.FormCode] {
			continue
		}
		now := s.now()
		t := &Template{
			ID: uuid.Must(uuid.NewV7()).String(), FormCode: d.FormCode, Name: d.Name, ContractType: d.ContractType,
			FileName: d.File, Format: path.Ext(d.File)[1:], FieldSpec: specJSON(d.spec()), Version: 1,
			CreatedAt: now, UpdatedAt: now,
		}
		data, err := fs.ReadFile(files, d.File)
		if err == nil {
			_, err = render.Inspect(data, s.limits)
		}
		if err != nil {
			s.log.WarnContext(ctx, "seeding a template without its file; it stays switched off",
				"formCode", d.FormCode, "file", d.File, "err", err)
		} else {
			t.StoragePath = storage.NewKey(blobPrefix, now, t.Format)
			if _, err := s.blobs.Put(ctx, t.StoragePath, bytes.NewReader(data), int64(len(data))); err != nil {
				return fmt.Errorf("seed template %s: store file: %w", d.FormCode, err)
			}
			t.IsActive = true
		}
		inserted, err := s.store.insertIfMissing(ctx, t)
		if err != nil || !inserted {
			if t.StoragePath != "" {
				s.removeBlob(ctx, t.StoragePath)
			}
		}
		if err != nil {
			return fmt.Errorf("seed template %s: %w", d.FormCode, err)
		}
	}
	return nil
}
