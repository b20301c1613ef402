package main

import (
	"context"
	"database/sql"
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

// sizes of the data set (issue 8 step 2).
type sizes struct {
	Users, Suppliers, Projects, Departments, Contracts int
	Evaluations                                        int // purchase evaluations (issue 15)
}

// benchPassword is the password of every bench user: the API sets it on the
// first user of each role and the bulk users copy that user's hash.
const benchPassword = "Bench-Passw0rd-2026"

const (
	adminEmail    = "admin@contractflow.local"
	adminPassword = "ChangeMe-Admin-2026"
)

// roleShare is how the users spread over the twelve roles (percent).
var roleShare = []struct {
	Role  string
	Share int
}{
	{"Drafter", 30}, {"DeptManager", 8}, {"ProjectManager", 10}, {"Procurement", 8}, {"CostControl", 7},
	{"Finance", 7}, {"Accounting", 7}, {"Equipment", 6}, {"Director", 3}, {"AuthorizedSigner", 4},
	{"HrAdmin", 5}, {"Admin", 5},
}

var (
	contractTypes = []string{"Subcontract", "PieceWork", "Supply", "Service", "Purchase", "FrameworkSupply", "FrameworkSubcontract"}
	typeCodes     = map[string]string{"Subcontract": "HDTP", "PieceWork": "HDGK", "Supply": "NCC", "Service": "HDDV",
		"Purchase": "MB", "FrameworkSupply": "HDKNCC", "FrameworkSubcontract": "HDKTP"}
)

// sealPhase is where the contracts module gives a contract its code
// (DESIGN §4): bulk contracts past it carry one, from the same sequences.
const sealPhase = "DangDongDau"

// searchWord occurs in about one title in sixteen (one of 16 work items).
const searchWord = "móng"

var (
	titleKinds = []string{"Hợp đồng thi công", "Hợp đồng cung cấp", "Hợp đồng thuê", "Hợp đồng dịch vụ", "Hợp đồng mua bán", "Hợp đồng khung"}
	titleItems = []string{"móng cọc", "phần thân", "hoàn thiện", "cơ điện", "thép xây dựng", "bê tông thương phẩm", "cửa nhôm kính",
		"thang máy", "cẩu tháp", "giàn giáo", "sơn nước", "chống thấm", "PCCC", "cấp thoát nước", "điều hòa không khí", "cảnh quan"}
	titleZones = []string{"Block A", "Block B", "Block C", "Tháp 1", "Tháp 2", "tầng hầm", "khu nhà xưởng", "khu tiện ích", "giai đoạn 2"}
	lastNames  = []string{"Nguyễn", "Trần", "Lê", "Phạm", "Hoàng", "Huỳnh", "Phan", "Vũ", "Võ", "Đặng", "Bùi", "Đỗ"}
	midNames   = []string{"Văn", "Thị", "Minh", "Hữu", "Đức", "Ngọc", "Thanh", "Quốc"}
	firstNames = []string{"An", "Bình", "Cường", "Dũng", "Hà", "Hải", "Lan", "Linh", "Nam", "Phong", "Quân", "Sơn", "Trang", "Tuấn", "Yến"}
	places     = []string{"Thủ Đức", "Bình Dương", "Long An", "Đồng Nai", "Hà Nội", "Đà Nẵng", "Hải Phòng", "Cần Thơ", "Nha Trang", "Vũng Tàu"}
	commentTxt = []string{"Đã kiểm tra khối lượng, đề nghị chuyển bước.", "Bổ sung bảng giá chi tiết theo phụ lục 2.",
		"Nhà cung cấp xác nhận tiến độ giao hàng.", "Điều chỉnh điều khoản thanh toán 30/70.", "Đã đối chiếu với dự toán được duyệt."}
)

// dataset is what the load produced and the scenarios use.
type dataset struct {
	sizes
	Approvals, Comments int
	ByPhase             map[string]int
	LiveIDs             []string // every live contract (detail)
	PoolHTTP, PoolRaw   []string // live contracts in the initial phase with a future deadline, split
	LoginEmails         []string // every user with benchPassword
	DrafterEmails       []string
	FinanceEmail        string
	ExportPhase         string
	ExportRows          int      // live contracts in ExportPhase
	RawActorID          string   // approver of the raw transaction's moves
	SupplierIDs         []string // every supplier (contract create)
	ProjectIDs          []string // every project (contract create)
	APITime, SQLTime    time.Duration
	Proc                *procData // evaluations and budgets (evaluations.go)
	Graph               *graph    // the contract workflow, read from the engine
	Phases              []phaseCount
	NextPhase           string // the initial phase's normal move (the transition scenario)
}

// loadAPI creates master data and the first user of each role through the
// running server, as an administrator would.
func loadAPI(ctx context.Context, c *client, sz sizes, clients int) error {
	var login struct{ AccessToken string }
	if err := c.call(ctx, http.MethodPost, "/api/auth/login", "", mustJSON(map[string]string{"email": adminEmail, "password": adminPassword}), 200, &login); err != nil {
		return fmt.Errorf("admin login: %w", err)
	}
	tok := login.AccessToken
	post := func(path string, body any) error {
		return c.call(ctx, http.MethodPost, path, tok, mustJSON(body), http.StatusCreated, nil)
	}
	depts := []string{"Phòng Kỹ thuật", "Phòng Kế hoạch", "Phòng Mua hàng", "Phòng Tài chính", "Phòng Kế toán", "Ban Chỉ huy công trường", "Phòng Thiết bị", "Phòng Pháp chế"}
	err := parallel(ctx, sz.Departments, clients, func(i int) error {
		return post("/api/departments", map[string]any{"code": fmt.Sprintf("PB%02d", i+1), "name": fmt.Sprintf("%s %d", depts[i%len(depts)], i/len(depts)+1)})
	})
	if err != nil {
		return fmt.Errorf("departments: %w", err)
	}
	statuses := []string{"Active", "Active", "Active", "Planning", "Closed"}
	err = parallel(ctx, sz.Projects, clients, func(i int) error {
		start := time.Date(2023+i%4, time.Month(1+i%12), 1+i%27, 0, 0, 0, 0, time.UTC)
		return post("/api/projects", map[string]any{"code": fmt.Sprintf("DA%03d", i+1), "name": fmt.Sprintf("Dự án khu đô thị %s %d", places[i%len(places)], i+1),
			"client": "Chủ đầu tư " + places[(i+3)%len(places)], "location": places[i%len(places)], "status": statuses[i%len(statuses)],
			"startDate": start.Format(time.DateOnly), "endDate": start.AddDate(2, 0, 0).Format(time.DateOnly)})
	})
	if err != nil {
		return fmt.Errorf("projects: %w", err)
	}
	supplierTypes := []string{"Material", "Subcontractor", "Service", "Equipment", "Consultant"}
	supplierKinds := []string{"Công ty TNHH Xây dựng", "Công ty CP Vật liệu", "Công ty TNHH Thiết bị", "Công ty CP Tư vấn", "Công ty TNHH Thương mại"}
	err = parallel(ctx, sz.Suppliers, clients, func(i int) error {
		return post("/api/suppliers", map[string]any{"code": fmt.Sprintf("NCC%04d", i+1),
			"name":         fmt.Sprintf("%s %s %d", supplierKinds[i%len(supplierKinds)], places[(i/5)%len(places)], i+1),
			"supplierType": supplierTypes[i%len(supplierTypes)], "taxCode": fmt.Sprintf("03%08d", i+1),
			"address": fmt.Sprintf("%d Đường số %d, %s", 10+i%90, 1+i%30, places[i%len(places)]), "phone": fmt.Sprintf("028%08d", i+1),
			"email": fmt.Sprintf("lienhe%04d@ncc.example", i+1), "contactPerson": personName(i)})
	})
	if err != nil {
		return fmt.Errorf("suppliers: %w", err)
	}
	// One user per role through the API (argon2id hashing, about 30 ms each).
	err = parallel(ctx, len(roleShare), min(clients, 2), func(i int) error {
		role := roleShare[i].Role
		return post("/api/users", map[string]any{"email": benchEmail(role, 0), "fullName": personName(1000 + i),
			"password": benchPassword, "roles": []string{role}})
	})
	if err != nil {
		return fmt.Errorf("users: %w", err)
	}
	return nil
}

func benchEmail(role string, n int) string {
	return fmt.Sprintf("bench.%s.%04d@bench.local", strings.ToLower(role), n)
}

func personName(i int) string {
	return lastNames[i%len(lastNames)] + " " + midNames[(i/7)%len(midNames)] + " " + firstNames[(i/3)%len(firstNames)]
}

// loader bulk-inserts with multi-row statements in large transactions: users
// beyond the first of each role, and every contract with its approvals and
// comments. The server is stopped meanwhile (on SQLite its writer would hold
// the lock; on Postgres it keeps both runs alike).
type loader struct {
	db   *database
	sql  *sql.DB
	rng  *rand.Rand
	now  time.Time
	stmt map[string]string // cached multi-row INSERT texts
}

func loadSQL(ctx context.Context, d *database, sz sizes, g *graph) (*dataset, error) {
	sqlDB, err := d.open(1)
	if err != nil {
		return nil, err
	}
	defer sqlDB.Close()
	l := &loader{db: d, sql: sqlDB, rng: rand.New(rand.NewPCG(2026, 8)), now: time.Now().UTC().Truncate(time.Microsecond), stmt: map[string]string{}}
	ds := &dataset{sizes: sz, ByPhase: map[string]int{}, Graph: g, Phases: g.shares(), NextPhase: g.Normal[1]}
	// The list and the export filter on the Finance inbox's phase.
	if ds.ExportPhase = g.inboxPhase("Finance"); ds.ExportPhase == "" {
		ds.ExportPhase = g.Normal[min(2, len(g.Normal)-2)]
	}
	byRole, err := l.users(ctx, sz.Users)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	for _, us := range byRole {
		for _, u := range us {
			if u.email != adminEmail {
				ds.LoginEmails = append(ds.LoginEmails, u.email)
			}
		}
	}
	for _, u := range byRole["Drafter"] {
		ds.DrafterEmails = append(ds.DrafterEmails, u.email)
	}
	ds.FinanceEmail = byRole["Finance"][0].email
	ds.RawActorID = byRole["Drafter"][0].id
	if err := l.contracts(ctx, ds, byRole); err != nil {
		if strings.Contains(err.Error(), "fts5") {
			err = fmt.Errorf("%w (the server's search triggers need FTS5 in this program's SQLite too: build both with -tags sqlite_fts5, as make bench does)", err)
		}
		return nil, fmt.Errorf("contracts: %w", err)
	}
	if d.driver == "postgres" {
		// Autovacuum vacuums and analyses a table after this many inserts
		// within a minute or so; do it now so the plans do not depend on its
		// timer. Without the visibility map a VACUUM sets, Postgres reads
		// the heap on every index-only scan and prefers sequential scans:
		// the dashboard was 4 to 7 times slower. SQLite has no automatic
		// ANALYZE and the service runs none: it gets none here.
		// Only this schema's tables: a bare VACUUM would walk every schema
		// of the database, other people's test schemas included.
		for _, t := range []string{"users", "user_roles", "suppliers", "projects", "departments",
			"contracts", "contract_approvals", "contract_comments", "contract_code_sequences"} {
			if _, err := sqlDB.ExecContext(ctx, "VACUUM ANALYZE "+t); err != nil {
				return nil, fmt.Errorf("vacuum analyze %s: %w", t, err)
			}
		}
	}
	return ds, nil
}

type user struct{ id, email string }

// users inserts the bulk users so that the roles reach their shares of
// total, copying the password hash of an API-created bench user, and returns
// every user by role.
func (l *loader) users(ctx context.Context, total int) (map[string][]user, error) {
	roleIDs := map[string]string{}
	rows, err := l.sql.QueryContext(ctx, "SELECT id, name FROM roles")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			rows.Close()
			return nil, err
		}
		roleIDs[name] = id
	}
	rows.Close()
	byRole, err := l.usersByRole(ctx)
	if err != nil {
		return nil, err
	}
	var hash string
	if err := l.sql.QueryRowContext(ctx, l.db.rebind("SELECT password_hash FROM users WHERE normalized_email = ?"), benchEmail("Drafter", 0)).Scan(&hash); err != nil {
		return nil, fmt.Errorf("hash of %s: %w", benchEmail("Drafter", 0), err)
	}
	var userRows, roleRows [][]any
	have := 0
	for _, us := range byRole {
		have += len(us)
	}
	n := 0
	for i, rs := range roleShare {
		want := total * rs.Share / 100
		if i == 0 { // Drafter takes the rounding
			rest := 0
			for _, o := range roleShare[1:] {
				rest += total * o.Share / 100
			}
			want = total - rest
		}
		for k := len(byRole[rs.Role]); k < want; k++ {
			id := uuid.Must(uuid.NewV7()).String()
			email := benchEmail(rs.Role, k)
			at := l.now.Add(-time.Duration(l.rng.Int64N(int64(700 * 24 * time.Hour))))
			userRows = append(userRows, []any{id, email, email, personName(n), hash, true, uuid.NewString(), true, 0, at, at, 1})
			roleRows = append(roleRows, []any{id, roleIDs[rs.Role]})
			n++
		}
	}
	err = l.inTx(ctx, func(tx *sql.Tx) error {
		if err := l.insert(ctx, tx, "users", "id, email, normalized_email, full_name, password_hash, is_active, security_stamp, "+
			"lockout_enabled, access_failed_count, created_at, updated_at, version", userRows); err != nil {
			return err
		}
		return l.insert(ctx, tx, "user_roles", "user_id, role_id", roleRows)
	})
	if err != nil {
		return nil, err
	}
	return l.usersByRole(ctx)
}

func (l *loader) usersByRole(ctx context.Context) (map[string][]user, error) {
	rows, err := l.sql.QueryContext(ctx, `SELECT u.id, u.normalized_email, r.name FROM users u
		JOIN user_roles ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id ORDER BY u.normalized_email`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]user{}
	for rows.Next() {
		var u user
		var role string
		if err := rows.Scan(&u.id, &u.email, &role); err != nil {
			return nil, err
		}
		out[role] = append(out[role], u)
	}
	return out, rows.Err()
}

func (l *loader) ids(ctx context.Context, q string) ([]string, error) {
	rows, err := l.sql.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

type project struct{ id, code string }

const contractColumns = "id, title, contract_type, supplier_id, project_id, department_id, value, currency, bypass_procurement_and_ccm, " +
	"phase, sla_deadline, sla_warning_sent, ma_hop_dong, draft_data, drafter_id, workflow_definition_id, description, start_date, end_date, " +
	"version, created_at, created_by, updated_at, updated_by, deleted_at, deleted_by"

// chunk is how many contracts (with their approvals and comments) go into
// one transaction.
const chunk = 5_000

// contracts inserts ds.Contracts contracts spread over all phases, types,
// projects and 24 months, each with one approval per move it made along
// the normal path and, for some, a comment or two.
func (l *loader) contracts(ctx context.Context, ds *dataset, byRole map[string][]user) error {
	g := ds.Graph
	workflowID := g.ID
	bypassable := map[string]bool{} // phases a bypassed contract passes through
	for _, p := range g.walk(true) {
		bypassable[p] = true
	}
	suppliers, err := l.ids(ctx, "SELECT id FROM suppliers ORDER BY code")
	if err != nil {
		return err
	}
	departments, err := l.ids(ctx, "SELECT id FROM departments ORDER BY code")
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
	if len(suppliers) == 0 || len(projects) == 0 {
		return fmt.Errorf("no suppliers or projects to attach contracts to")
	}
	ds.SupplierIDs = suppliers
	for _, p := range projects {
		ds.ProjectIDs = append(ds.ProjectIDs, p.id)
	}
	columns := contractColumns
	// Migration 4 of contracts added a folded search_text of title and code,
	// which the service fills in Go; follow the schema the binary created.
	withSearch, err := l.hasColumn(ctx, "contracts", "search_text")
	if err != nil {
		return err
	}
	if withSearch {
		columns += ", search_text"
	}
	drafters := append(append([]user(nil), byRole["Drafter"]...), byRole["DeptManager"]...)
	pick := func(role string) string {
		us := byRole[role]
		return us[l.rng.IntN(len(us))].id
	}
	ict := time.FixedZone("ICT", 7*3600) // Asia/Ho_Chi_Minh, which has no DST
	seqs := map[string]int{}
	var pool []string
	rng := l.rng
	span := int64(730 * 24 * time.Hour)
	recent := int64(120 * 24 * time.Hour)

	for from := 0; from < ds.Contracts; from += chunk {
		var cRows, aRows, mRows [][]any
		for range min(chunk, ds.Contracts-from) {
			id := uuid.Must(uuid.NewV7()).String()
			phase := pickPhase(ds.Phases, rng.IntN(100))
			ctype := contractTypes[rng.IntN(len(contractTypes))]
			framework := strings.HasPrefix(ctype, "Framework")
			bypass := bypassable[phase] && rng.IntN(10) == 0
			terminal := g.terminal(phase)
			var created time.Time
			if terminal {
				created = l.now.Add(-time.Duration(int64(3*24*time.Hour) + rng.Int64N(span)))
			} else {
				created = l.now.Add(-time.Duration(int64(time.Hour) + rng.Int64N(recent)))
			}
			created = created.Truncate(time.Microsecond)
			path := g.path(phase, bypass)
			moves := len(path) - 1
			step := min(l.now.Sub(created)/time.Duration(moves+1), 6*24*time.Hour)
			drafter := drafters[rng.IntN(len(drafters))].id
			var proj *project
			if !framework || rng.IntN(2) == 0 {
				proj = &projects[skewed(rng, len(projects))]
			}
			var projectID, deptID any
			if proj != nil {
				projectID = proj.id
			}
			if rng.IntN(5) > 0 {
				deptID = departments[rng.IntN(len(departments))]
			}
			at, sealedAt := created, created
			lastBy := drafter
			for j := 1; j <= moves; j++ {
				at = at.Add(step/2 + time.Duration(rng.Int64N(int64(step/2)+1))).Truncate(time.Microsecond)
				to := path[j]
				by := drafter
				if r := g.mover(path[j-1], to); r != "drafter" {
					by = pick(r)
				}
				decision, comment := "Approve", ""
				if to == g.Reject {
					decision, comment = "Reject", "Giá trị vượt dự toán được duyệt; đề nghị đàm phán lại."
				}
				aRows = append(aRows, []any{uuid.Must(uuid.NewV7()).String(), id, path[j-1], to, by, decision, comment, at})
				lastBy = by
				if to == sealPhase {
					sealedAt = at
				}
			}
			var deadline, code, deletedAt, deletedBy any
			inPool := false
			switch {
			case terminal:
			case phase == g.Initial && rng.IntN(100) > 0:
				inPool = true
				deadline = l.now.Add(time.Hour + time.Duration(rng.Int64N(int64(160*time.Hour)))).Truncate(time.Microsecond)
			case rng.IntN(5) == 0: // overdue
				deadline = l.now.Add(-time.Hour - time.Duration(rng.Int64N(int64(5*24*time.Hour)))).Truncate(time.Microsecond)
			default:
				deadline = l.now.Add(time.Hour + time.Duration(rng.Int64N(int64(max(1, g.slaHours(phase)))*int64(time.Hour)))).Truncate(time.Microsecond)
			}
			if !inPool && (phase == g.Normal[0] || phase == g.Normal[1]) && rng.IntN(100) == 0 {
				deletedAt, deletedBy = at.Add(time.Hour), drafter
			}
			if phase != g.Reject && slices.Contains(path, sealPhase) {
				head := fmt.Sprint(sealedAt.In(ict).Year())
				if !framework {
					head = proj.code
				}
				prefix := head + "-" + typeCodes[ctype]
				seqs[prefix]++
				code = fmt.Sprintf("%s-%03d", prefix, seqs[prefix])
			}
			if rng.IntN(10) < 3 {
				for k := range 1 + rng.IntN(2) {
					when := created.Add(time.Duration(rng.Int64N(int64(at.Sub(created)) + 1))).Truncate(time.Microsecond)
					mRows = append(mRows, []any{uuid.Must(uuid.NewV7()).String(), id, path[rng.IntN(len(path))],
						commentTxt[(k+rng.IntN(len(commentTxt)))%len(commentTxt)], drafter, when})
				}
			}
			start := created.AddDate(0, 0, 15)
			title := fmt.Sprintf("%s %s %s", titleKinds[rng.IntN(len(titleKinds))], titleItems[rng.IntN(len(titleItems))], titleZones[rng.IntN(len(titleZones))])
			if proj != nil {
				title += " – " + proj.code
			}
			row := []any{id, title, ctype, suppliers[skewed(rng, len(suppliers))], projectID, deptID,
				value(rng), "VND", bypass, phase, deadline, false, code, "{}", drafter, workflowID, "",
				start.Format(time.DateOnly), start.AddDate(0, 6+rng.IntN(13), 0).Format(time.DateOnly),
				1 + moves, created, drafter, at, lastBy, deletedAt, deletedBy}
			if withSearch {
				parts := []string{title}
				if c, ok := code.(string); ok {
					parts = append(parts, c)
				}
				row = append(row, search.Text(parts...))
			}
			cRows = append(cRows, row)
			if deletedAt == nil {
				ds.LiveIDs = append(ds.LiveIDs, id)
				ds.ByPhase[phase]++
			}
			if inPool {
				pool = append(pool, id)
			}
		}
		err := l.inTx(ctx, func(tx *sql.Tx) error {
			if err := l.insert(ctx, tx, "contracts", columns, cRows); err != nil {
				return err
			}
			if err := l.insert(ctx, tx, "contract_approvals", "id, contract_id, from_phase, to_phase, approver_user_id, decision, comment, approved_at", aRows); err != nil {
				return err
			}
			return l.insert(ctx, tx, "contract_comments", "id, contract_id, phase, content, author_id, created_at", mRows)
		})
		if err != nil {
			return err
		}
		ds.Approvals += len(aRows)
		ds.Comments += len(mRows)
	}
	var seqRows [][]any
	for prefix, n := range seqs {
		seqRows = append(seqRows, []any{prefix, n})
	}
	err = l.inTx(ctx, func(tx *sql.Tx) error {
		return l.insert(ctx, tx, "contract_code_sequences", "prefix, last_seq", seqRows)
	})
	if err != nil {
		return err
	}
	// Two thirds of the pool for the HTTP transitions, the rest for the raw
	// transaction (which also walks its contracts further along the path).
	cut := len(pool) * 2 / 3
	ds.PoolHTTP, ds.PoolRaw = pool[:cut], pool[cut:]
	ds.ExportRows = ds.ByPhase[ds.ExportPhase]
	return nil
}

// hasColumn reports whether the binary's migrations gave table the column.
func (l *loader) hasColumn(ctx context.Context, table, column string) (bool, error) {
	q := "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?"
	if l.db.driver == "postgres" {
		q = "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2"
	}
	var n int
	err := l.sql.QueryRowContext(ctx, q, table, column).Scan(&n)
	return n > 0, err
}

func pickPhase(shares []phaseCount, n int) string {
	for _, p := range shares {
		if n < p.Share {
			return p.Phase
		}
		n -= p.Share
	}
	return shares[0].Phase
}

// skewed picks an index in [0, n) with low indexes more likely, so a few
// suppliers and projects carry most contracts, as in life.
func skewed(rng *rand.Rand, n int) int {
	u := rng.Float64()
	return min(n-1, int(float64(n)*u*u))
}

// value is a contract value in hundredths of VND: 20 million to 20 billion,
// log-uniform, rounded to thousands.
func value(rng *rand.Rand) int64 {
	v := math.Exp(math.Log(2e7) + rng.Float64()*(math.Log(2e10)-math.Log(2e7)))
	return int64(v/1000) * 1000 * 100
}

func (l *loader) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := l.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// maxParams stays under SQLite's 32 766 bound variables (and Postgres' 65 535).
const maxParams = 30_000

// insert writes rows with multi-row INSERTs of up to maxParams parameters;
// the full-size statement is prepared once per call.
func (l *loader) insert(ctx context.Context, tx *sql.Tx, table, columns string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	cols := len(rows[0])
	per := min(maxParams/cols, 1000)
	args := make([]any, 0, per*cols)
	var full *sql.Stmt
	defer func() {
		if full != nil {
			_ = full.Close()
		}
	}()
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		args = args[:0]
		for _, r := range rows[start:end] {
			args = append(args, r...)
		}
		q := l.statement(table, columns, cols, end-start)
		var err error
		if end-start == per {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, q); err != nil {
					return fmt.Errorf("prepare insert into %s: %w", table, err)
				}
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, q, args...)
		}
		if err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}

func (l *loader) statement(table, columns string, cols, n int) string {
	key := fmt.Sprintf("%s/%d", table, n)
	if q, ok := l.stmt[key]; ok {
		return q
	}
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + columns + ") VALUES ")
	p := 0
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			p++
			b.WriteString(l.db.ph(p))
		}
		b.WriteByte(')')
	}
	l.stmt[key] = b.String()
	return l.stmt[key]
}
