package kernel

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// DemoSize is how much bulk demo data `contractflow seed --demo-size N`
// loads: N contracts, and the other sizes derived from N unless given.
type DemoSize struct {
	Contracts   int
	Evaluations int // purchase evaluations with their quotations
	Users       int // over the twelve roles
	Suppliers   int
	Projects    int
	Departments int
	// Seed makes the data set: the same seed and sizes give the same rows
	// (ids, titles, phases, values), with times relative to the load's now.
	Seed uint64
	// Password is every demo user's password; one hash is computed and
	// shared, so a data set of a thousand users loads in a second.
	Password string
}

// DefaultDemoPassword is the demo users' password when none is given.
const DefaultDemoPassword = "Demo-Passw0rd-2026"

// WithDefaults fills the sizes left zero from Contracts: at 100 000
// contracts, 20 000 evaluations, 1 000 users, 2 000 suppliers, 300
// projects and 8 departments (the benchmark's data set).
func (s DemoSize) WithDefaults() DemoSize {
	n := s.Contracts
	switch {
	case s.Evaluations < 0: // none asked for
		s.Evaluations = 0
	case s.Evaluations == 0:
		s.Evaluations = n / 5
	}
	if s.Users == 0 {
		s.Users = max(48, n/100)
	}
	if s.Suppliers == 0 {
		s.Suppliers = max(20, n/50)
	}
	if s.Projects == 0 {
		s.Projects = max(5, n*3/1000)
	}
	if s.Departments == 0 {
		s.Departments = 8
	}
	if s.Seed == 0 {
		s.Seed = 2026
	}
	if s.Password == "" {
		s.Password = DefaultDemoPassword
	}
	return s
}

func (s DemoSize) validate() error {
	if s.Contracts < 1 || s.Evaluations < 0 || s.Users < 24 || s.Suppliers < 5 || s.Projects < 1 || s.Departments < 1 {
		return errors.New("demo size: contracts ≥ 1, users ≥ 24, suppliers ≥ 5, projects and departments ≥ 1, evaluations ≥ 0")
	}
	return nil
}

// DemoSet is the bulk demo data set under construction. The kernel hands it
// to each enabled DemoSeeder in dependency order; each module adds what it
// owns (created now, or found from an earlier run) for the modules after
// it, which never read the owner's tables themselves.
type DemoSet struct {
	Size DemoSize
	Now  time.Time // the load's now, truncated to microseconds

	// From identity: demo user ids by role name.
	UsersByRole map[string][]string
	// From masterdata, in code order.
	Suppliers   []string
	Projects    []DemoProject
	Departments []string
	// From contracts: the live contracts waiting in CostControl's check
	// that name no budget line (the budget module's demo names lines on
	// some), and how the budget module names them.
	AwaitingBudget  []DemoContract
	NameBudgetLines func(ctx context.Context, lineByContract map[string]string) error
}

// DemoProject is a demo project's id and code.
type DemoProject struct{ ID, Code string }

// DemoContract is what the budget demo needs of a contract.
type DemoContract struct {
	ID, ProjectID string
	Value         int64 // hundredths of VND
}

// Rand returns a generator for one module's part of the data set: the same
// seed and stream give the same numbers on every run.
func (d *DemoSet) Rand(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(d.Size.Seed, stream)) }

// DemoSeeder loads the module's part of the bulk demo data set in its own
// tables, through its own code (a multi-row path is fine), keeping every
// invariant of the module true. Run twice with the same size it adds
// nothing, but it still fills its part of set from what is there.
type DemoSeeder interface {
	SeedDemoSet(ctx context.Context, app *App, set *DemoSet) error
}

// SeedDemo runs each enabled module's DemoSeeder, in dependency order, after
// the ordinary seed (which the caller runs first). Nodes seeding together
// take turns, as Seed does.
func (k *Kernel) SeedDemo(ctx context.Context, size DemoSize) (*DemoSet, error) {
	size = size.WithDefaults()
	if err := size.validate(); err != nil {
		return nil, err
	}
	set := &DemoSet{Size: size, Now: k.app.Clock.Now().UTC().Truncate(time.Microsecond), UsersByRole: map[string][]string{}}
	err := k.app.DB.Serialized(ctx, "kernel.seed", func(ctx context.Context) error {
		for _, m := range k.enabled {
			if s, ok := m.(DemoSeeder); ok {
				began := time.Now()
				err := s.SeedDemoSet(ctx, k.views[m.Info().Name], set)
				if drift := k.app.takeDrift(); err == nil && len(drift) > 0 {
					err = errors.Join(drift...)
				}
				if err != nil {
					return fmt.Errorf("demo data of module %s: %w", m.Info().Name, err)
				}
				k.app.Log.Info("demo data seeded", "module", m.Info().Name, "took", time.Since(began))
			}
		}
		return nil
	})
	if err != nil {
		return set, err
	}
	return set, k.app.DB.AnalyzeAfterLoad(ctx)
}

// demoEpoch is the time in the demo ids: ids are UUIDv7 in the order the
// rows are made, the same on every run of one seed.
var demoEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// NewID returns the next demo id of r: a version 7 UUID whose time part
// counts up from demoEpoch by seq and whose random part comes from r.
func NewID(r *rand.Rand, seq int) string {
	var b [16]byte
	ms := uint64(demoEpoch) + uint64(seq)
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	hi, lo := r.Uint64(), r.Uint64()
	for i := range 2 {
		b[6+i] = byte(hi >> (8 * i))
	}
	for i := range 8 {
		b[8+i] = byte(lo >> (8 * i))
	}
	b[6] = b[6]&0x0f | 0x70 // version 7
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Vietnamese words the demo steps make names and titles of.
var (
	DemoLastNames  = []string{"Nguyễn", "Trần", "Lê", "Phạm", "Hoàng", "Huỳnh", "Phan", "Vũ", "Võ", "Đặng", "Bùi", "Đỗ"}
	DemoMidNames   = []string{"Văn", "Thị", "Minh", "Hữu", "Đức", "Ngọc", "Thanh", "Quốc"}
	DemoFirstNames = []string{"An", "Bình", "Cường", "Dũng", "Hà", "Hải", "Lan", "Linh", "Nam", "Phong", "Quân", "Sơn", "Trang", "Tuấn", "Yến"}
	DemoPlaces     = []string{"Thủ Đức", "Bình Dương", "Long An", "Đồng Nai", "Hà Nội", "Đà Nẵng", "Hải Phòng", "Cần Thơ", "Nha Trang", "Vũng Tàu"}
	// DemoWorkItems: one title in sixteen names "móng" (the list search of
	// the benchmark).
	DemoWorkItems = []string{"móng cọc", "phần thân", "hoàn thiện", "cơ điện", "thép xây dựng", "bê tông thương phẩm", "cửa nhôm kính",
		"thang máy", "cẩu tháp", "giàn giáo", "sơn nước", "chống thấm", "PCCC", "cấp thoát nước", "điều hòa không khí", "cảnh quan"}
	DemoZones = []string{"Block A", "Block B", "Block C", "Tháp 1", "Tháp 2", "tầng hầm", "khu nhà xưởng", "khu tiện ích", "giai đoạn 2"}
)

// DemoPerson is the i-th demo person's name.
func DemoPerson(i int) string {
	return DemoLastNames[i%len(DemoLastNames)] + " " + DemoMidNames[(i/7)%len(DemoMidNames)] + " " + DemoFirstNames[(i/3)%len(DemoFirstNames)]
}

// Skewed picks an index in [0, n) with low indexes more likely, so a few
// suppliers and projects carry most documents, as in life.
func Skewed(r *rand.Rand, n int) int {
	u := r.Float64()
	return min(n-1, int(float64(n)*u*u))
}
