package calendar_test

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/calendar"
)

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// at reads "2006-01-02 15:04" as a wall-clock time in loc.
func at(t testing.TB, loc *time.Location, s string) time.Time {
	t.Helper()
	tm, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	require.NoError(t, err)
	return tm
}

// working returns a working-time configuration in the named zone with the
// documented defaults, changed by the options.
func working(t testing.TB, zoneName string, opts ...func(*calendar.Config)) calendar.Config {
	cfg := calendar.Config{
		Mode:         calendar.WorkingHours,
		Location:     zone(t, zoneName),
		WorkingDays:  strings.Split(calendar.DefaultWorkingDays, ","),
		WorkingHours: strings.Split(calendar.DefaultWorkingHours, ","),
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

func days(d ...string) func(*calendar.Config) {
	return func(c *calendar.Config) { c.WorkingDays = d }
}

func ranges(r ...string) func(*calendar.Config) {
	return func(c *calendar.Config) { c.WorkingHours = r }
}

func holidays(h ...string) func(*calendar.Config) {
	return func(c *calendar.Config) { c.Holidays = h }
}

func mustNew(t testing.TB, cfg calendar.Config) *calendar.Calendar {
	t.Helper()
	c, err := calendar.New(cfg)
	require.NoError(t, err)
	return c
}

const (
	saigon  = "Asia/Ho_Chi_Minh"
	berlin  = "Europe/Berlin"
	newYork = "America/New_York"
)

var allDays = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// Dates used below: 2026-03-06 is a Friday; Europe changes its clocks on
// Sunday 2026-03-29 (02:00 → 03:00) and Sunday 2026-10-25 (03:00 → 02:00),
// the United States on Sunday 2026-03-08 and Sunday 2026-11-01.
func TestDeadline(t *testing.T) {
	lunch := ranges("08:00-12:00", "13:00-17:00")
	mayDay := holidays("2026-04-30", "2026-05-01", "2026-05-02") // Thu, Fri, and a Saturday that changes nothing
	night := []func(*calendar.Config){days(allDays...), ranges("01:00-05:00")}
	tests := []struct {
		name  string
		cfg   calendar.Config
		start string // wall clock in the calendar's zone
		hours int
		want  string // wall clock in the calendar's zone
	}{
		{"Friday 16:00 + 8h ends Monday 15:00", working(t, saigon), "2026-03-06 16:00", 8, "2026-03-09 15:00"},
		{"a full day ends at closing, not next morning", working(t, saigon), "2026-03-09 08:00", 9, "2026-03-09 17:00"},
		{"one hour more is the next morning", working(t, saigon), "2026-03-09 08:00", 10, "2026-03-10 09:00"},
		{"start before opening", working(t, saigon), "2026-03-09 06:30", 1, "2026-03-09 09:00"},
		{"start after closing", working(t, saigon), "2026-03-09 18:00", 1, "2026-03-10 09:00"},
		{"start at closing", working(t, saigon), "2026-03-09 17:00", 1, "2026-03-10 09:00"},
		{"start on a Sunday", working(t, saigon), "2026-03-08 10:00", 1, "2026-03-09 09:00"},
		{"start on a Saturday, a full day", working(t, saigon), "2026-03-07 12:00", 9, "2026-03-09 17:00"},
		{"Friday 16:00 + 16h ends Tuesday 14:00", working(t, saigon), "2026-03-06 16:00", 16, "2026-03-10 14:00"},
		{"five working days from mid-morning", working(t, saigon), "2026-03-10 10:30", 45, "2026-03-17 10:30"},
		{"168 working hours are 3 weeks and 33 hours", working(t, saigon), "2026-01-05 08:00", 168, "2026-01-29 14:00"},
		{"10 000 working hours", working(t, saigon), "2026-01-05 08:00", 10000, "2030-04-09 09:00"},
		{"lunch: start during lunch", working(t, saigon, lunch), "2026-03-09 12:30", 1, "2026-03-09 14:00"},
		{"lunch: across lunch", working(t, saigon, lunch), "2026-03-09 11:00", 2, "2026-03-09 14:00"},
		{"lunch: ends exactly at lunch", working(t, saigon, lunch), "2026-03-09 08:00", 4, "2026-03-09 12:00"},
		{"lunch: a day is 8 hours", working(t, saigon, lunch), "2026-03-09 08:00", 8, "2026-03-09 17:00"},
		{"lunch: Friday 16:00 + 8h", working(t, saigon, lunch), "2026-03-06 16:00", 8, "2026-03-09 16:00"},
		{"adjacent ranges count as one", working(t, saigon, ranges("08:00-12:00", "12:00-17:00")), "2026-03-09 08:00", 9, "2026-03-09 17:00"},
		{"24:00 ends the day", working(t, saigon, ranges("18:00-24:00")), "2026-03-09 20:00", 5, "2026-03-10 19:00"},
		{"holidays: a long weekend is skipped", working(t, saigon, mayDay), "2026-04-29 16:00", 2, "2026-05-04 09:00"},
		{"holidays: start on a holiday", working(t, saigon, mayDay), "2026-04-30 09:00", 1, "2026-05-04 09:00"},
		{"holidays: a week across them", working(t, saigon, mayDay), "2026-04-27 08:00", 45, "2026-05-05 17:00"},
		{"holidays: other weeks are untouched", working(t, saigon, mayDay), "2026-05-08 16:00", 8, "2026-05-11 15:00"},
		{"weekend days can be working days", working(t, saigon, days("Sat", "Sun")), "2026-03-06 16:00", 10, "2026-03-08 09:00"},
		{"Berlin: over the March clock change", working(t, berlin), "2026-03-27 16:00", 8, "2026-03-30 15:00"},
		{"Berlin: over the October clock change", working(t, berlin), "2026-10-23 16:00", 8, "2026-10-26 15:00"},
		{"Berlin: 40 weeks across both clock changes end on a Friday", working(t, berlin), "2026-03-02 08:00", 45 * 40, "2026-12-04 17:00"},
		{"Berlin night: the March change leaves 3 hours", working(t, berlin, night...), "2026-03-29 01:00", 4, "2026-03-30 02:00"},
		{"Berlin night: the October change gives 5 hours", working(t, berlin, night...), "2026-10-25 01:00", 5, "2026-10-25 05:00"},
		{"Berlin night: into the October change", working(t, berlin, night...), "2026-10-24 01:00", 8, "2026-10-25 04:00"},
		{"New York: over the March clock change", working(t, newYork), "2026-03-06 16:00", 8, "2026-03-09 15:00"},
		{"New York: over the November clock change", working(t, newYork), "2026-10-30 16:00", 8, "2026-11-02 15:00"},
		{"zero hours is the start", working(t, saigon), "2026-03-08 10:00", 0, "2026-03-08 10:00"},
		{"negative hours are the start", working(t, saigon), "2026-03-08 10:00", -5, "2026-03-08 10:00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustNew(t, tc.cfg)
			start := at(t, tc.cfg.Location, tc.start)
			got := c.Deadline(start, tc.hours)
			want := at(t, tc.cfg.Location, tc.want)
			assert.True(t, want.Equal(got), "Deadline(%s, %d) = %s, want %s", start, tc.hours, got.In(tc.cfg.Location), want)
			if tc.hours > 0 {
				assert.Equal(t, time.Duration(tc.hours)*time.Hour, c.Remaining(start, got), "Remaining(start, Deadline)")
			}
		})
	}
}

func TestDeadlineStartInAnotherZone(t *testing.T) {
	// Friday 09:00 UTC is Friday 16:00 in Ho Chi Minh City; the answer is
	// the same instant whatever zone the start is expressed in.
	c := mustNew(t, working(t, saigon))
	got := c.Deadline(time.Date(2026, 3, 6, 9, 0, 0, 0, time.UTC), 8)
	assert.True(t, at(t, zone(t, saigon), "2026-03-09 15:00").Equal(got), "got %s", got)
}

// With every hour of every day working, working time is elapsed time: the
// deadline must be exactly start + hours even across clock changes, which
// a day-counting bug (23- and 25-hour days) would break.
func TestDeadlineRoundTheClockIsElapsedTime(t *testing.T) {
	for _, name := range []string{berlin, newYork, saigon} {
		cfg := working(t, name, days(allDays...), ranges("00:00-24:00"))
		c := mustNew(t, cfg)
		for _, start := range []string{"2026-03-06 12:00", "2026-03-28 12:00", "2026-10-24 12:00", "2026-10-31 23:30"} {
			for _, h := range []int{1, 23, 24, 25, 49, 200, 24 * 365, 10000, 100000} {
				s := at(t, cfg.Location, start)
				assert.True(t, s.Add(time.Duration(h)*time.Hour).Equal(c.Deadline(s, h)), "%s %s + %dh", name, start, h)
			}
		}
	}
}

func TestRemaining(t *testing.T) {
	mayDay := holidays("2026-04-30", "2026-05-01")
	tests := []struct {
		name     string
		cfg      calendar.Config
		now      string
		deadline string
		want     time.Duration
	}{
		{"within a day", working(t, saigon), "2026-03-09 09:00", "2026-03-09 12:00", 3 * time.Hour},
		{"over a weekend", working(t, saigon), "2026-03-06 16:00", "2026-03-09 15:00", 8 * time.Hour},
		{"now outside working hours", working(t, saigon), "2026-03-07 12:00", "2026-03-09 10:00", 2 * time.Hour},
		{"minutes count", working(t, saigon), "2026-03-09 16:45", "2026-03-10 08:20", 35 * time.Minute},
		{"lunch does not count", working(t, saigon, ranges("08:00-12:00", "13:00-17:00")), "2026-03-09 11:30", "2026-03-09 13:30", time.Hour},
		{"a holiday does not count", working(t, saigon, mayDay), "2026-04-29 16:00", "2026-05-04 10:00", 3 * time.Hour},
		{"zero at the deadline", working(t, saigon), "2026-03-09 10:00", "2026-03-09 10:00", 0},
		{"zero when only closed time is left", working(t, saigon), "2026-03-06 17:30", "2026-03-09 08:00", 0},
		{"overdue by working time", working(t, saigon), "2026-03-09 09:00", "2026-03-06 17:00", -time.Hour},
		{"overdue does not grow over a weekend", working(t, saigon), "2026-03-08 12:00", "2026-03-06 16:00", -time.Hour},
		{"overdue across a holiday", working(t, saigon, mayDay), "2026-05-04 10:00", "2026-04-29 16:00", -3 * time.Hour},
		{"overdue within a day", working(t, saigon), "2026-03-09 16:30", "2026-03-09 09:15", -(7*time.Hour + 15*time.Minute)},
		{"Berlin over the March change", working(t, berlin), "2026-03-27 16:00", "2026-03-30 15:00", 8 * time.Hour},
		{"Berlin night on the March change", working(t, berlin, days(allDays...), ranges("01:00-05:00")), "2026-03-29 00:00", "2026-03-30 00:00", 3 * time.Hour},
		{"New York over the November change", working(t, newYork), "2026-10-30 16:00", "2026-11-02 15:00", 8 * time.Hour},
		{"a year ahead", working(t, saigon), "2026-01-05 08:00", "2027-01-04 08:00", 52 * 45 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustNew(t, tc.cfg)
			got := c.Remaining(at(t, tc.cfg.Location, tc.now), at(t, tc.cfg.Location, tc.deadline))
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestWallClock(t *testing.T) {
	loc := zone(t, saigon)
	fridayAfternoon := at(t, loc, "2026-03-06 16:00")
	explicit := mustNew(t, calendar.Config{Mode: calendar.Hours})
	zero := mustNew(t, calendar.Config{}) // an empty mode is hours
	var none *calendar.Calendar           // nil counts wall-clock hours too
	for name, c := range map[string]*calendar.Calendar{"hours": explicit, "empty mode": zero, "nil": none} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, calendar.Hours, c.Mode())
			tests := []struct {
				name string
				got  any
				want any
			}{
				{"8h over a weekend evening", c.Deadline(fridayAfternoon, 8), fridayAfternoon.Add(8 * time.Hour)},
				{"168h is a week", c.Deadline(fridayAfternoon, 168), at(t, loc, "2026-03-13 16:00")},
				{"zero hours", c.Deadline(fridayAfternoon, 0), fridayAfternoon},
				{"huge hours stop at MaxSpan", c.Deadline(fridayAfternoon, 1<<62), fridayAfternoon.Add(calendar.MaxSpan)},
				{"remaining", c.Remaining(fridayAfternoon, at(t, loc, "2026-03-09 15:00")), 71 * time.Hour},
				{"remaining zero", c.Remaining(fridayAfternoon, fridayAfternoon), time.Duration(0)},
				{"overdue", c.Remaining(at(t, loc, "2026-03-09 15:00"), fridayAfternoon), -71 * time.Hour},
			}
			for _, tc := range tests {
				assert.Equal(t, tc.want, tc.got, tc.name)
			}
		})
	}
}

// The defining property: whatever the start (in or out of working time,
// near clock changes and holidays), Remaining from the start to the deadline
// is the SLA, and from the deadline back to the start is its negative.
func TestRemainingInvertsDeadline(t *testing.T) {
	calendars := map[string]calendar.Config{
		"saigon":           working(t, saigon),
		"saigon lunch":     working(t, saigon, ranges("08:00-12:00", "13:00-17:00"), holidays("2026-04-30", "2026-05-01", "2026-09-02", "2027-01-01")),
		"berlin":           working(t, berlin, holidays("2026-04-03", "2026-04-06", "2026-12-25")),
		"berlin night":     working(t, berlin, days(allDays...), ranges("00:30-02:30", "02:45-05:00")),
		"new york":         working(t, newYork, holidays("2026-11-26", "2026-12-25")),
		"new york 3 days":  working(t, newYork, days("tue", "Thursday", "SAT"), ranges("9:30-11:00", "14:00-24:00")),
		"round the clock":  working(t, berlin, days(allDays...), ranges("00:00-24:00")),
		"one day a week":   working(t, saigon, days("Wed"), ranges("10:00-10:30")),
		"holiday clusters": working(t, berlin, holidays(everyDay("2026-03-23", 21)...)),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	for name, cfg := range calendars {
		c := mustNew(t, cfg)
		for range 200 {
			start := base.Add(time.Duration(rng.Int64N(int64(500 * 24 * time.Hour))))
			for _, h := range []int{1, 2, 7, 8, 9, 13, 24, 45, 168, 500, 2000, 10000, 40000} {
				d := c.Deadline(start, h)
				if d.Before(start) || d.After(start.Add(calendar.MaxSpan)) {
					t.Fatalf("%s: Deadline(%s, %d) = %s, outside [start, start+MaxSpan]", name, start, h, d)
				}
				if d.Equal(start.Add(calendar.MaxSpan)) {
					continue // too long for this calendar: capped, see TestDeadlineIsBounded
				}
				if got := c.Remaining(start, d); got != time.Duration(h)*time.Hour {
					t.Fatalf("%s: Remaining(%s, Deadline(start, %d) = %s) = %s", name, start, h, d, got)
				}
				if got := c.Remaining(d, start); got != -time.Duration(h)*time.Hour {
					t.Fatalf("%s: Remaining(%s, %s) = %s, want -%dh", name, d, start, got, h)
				}
			}
		}
	}
}

func everyDay(from string, n int) []string {
	d, _ := time.Parse(time.DateOnly, from)
	out := make([]string, n)
	for i := range out {
		out[i] = d.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return out
}

// reference is the calendar by definition: a minute is working when its
// local wall-clock time lies in a range of a working day that is not a
// holiday. It walks minute by minute, so it is only fit for short SLAs.
type reference struct {
	loc      *time.Location
	days     []time.Weekday
	ranges   [][2]int // minutes after midnight
	holidays []string
}

func (r reference) working(t time.Time) bool {
	lt := t.In(r.loc)
	if !slices.Contains(r.days, lt.Weekday()) || slices.Contains(r.holidays, lt.Format(time.DateOnly)) {
		return false
	}
	m := lt.Hour()*60 + lt.Minute()
	for _, rg := range r.ranges {
		if m >= rg[0] && m < rg[1] {
			return true
		}
	}
	return false
}

func (r reference) deadline(start time.Time, hours int) time.Time {
	left := hours * 60
	for t := start; ; t = t.Add(time.Minute) {
		if r.working(t) {
			if left--; left == 0 {
				return t.Add(time.Minute)
			}
		}
	}
}

func TestDeadlineMatchesMinuteByMinute(t *testing.T) {
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	tests := []struct {
		name string
		cfg  calendar.Config
		ref  reference
		from time.Time // starts are drawn from the 20 days after this
	}{
		{"saigon lunch and holidays", working(t, saigon, ranges("08:00-12:00", "13:00-17:00"), holidays("2026-04-30", "2026-05-01")),
			reference{zone(t, saigon), weekdays, [][2]int{{480, 720}, {780, 1020}}, []string{"2026-04-30", "2026-05-01"}},
			time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC)},
		{"berlin nights over the March change", working(t, berlin, days(allDays...), ranges("01:00-05:00"), holidays("2026-03-31")),
			reference{zone(t, berlin), []time.Weekday{0, 1, 2, 3, 4, 5, 6}, [][2]int{{60, 300}}, []string{"2026-03-31"}},
			time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)},
		{"berlin nights over the October change", working(t, berlin, days(allDays...), ranges("01:00-05:00")),
			reference{zone(t, berlin), []time.Weekday{0, 1, 2, 3, 4, 5, 6}, [][2]int{{60, 300}}, nil},
			time.Date(2026, 10, 15, 0, 0, 0, 0, time.UTC)},
		{"new york over the November change", working(t, newYork),
			reference{zone(t, newYork), weekdays, [][2]int{{480, 1020}}, nil},
			time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustNew(t, tc.cfg)
			for range 40 {
				start := tc.from.Add(time.Duration(rng.IntN(20*24*60)) * time.Minute)
				h := 1 + rng.IntN(30)
				want := tc.ref.deadline(start, h)
				got := c.Deadline(start, h)
				require.True(t, want.Equal(got), "Deadline(%s, %d) = %s, want %s", start.In(tc.ref.loc), h, got.In(tc.ref.loc), want.In(tc.ref.loc))
			}
		})
	}
}

// A calendar with almost no working time must not make Deadline loop for
// ever or for long: the search stops MaxSpan after the start.
func TestDeadlineIsBounded(t *testing.T) {
	// One minute a week, on Sundays, and three years of holidays first
	// (2026-01-01 … 2029-01-02); the first working Sunday is 2029-01-07.
	cfg := working(t, berlin, days("Sun"), ranges("10:00-10:01"), holidays(everyDay("2026-01-01", 3*366)...))
	c := mustNew(t, cfg)
	start := at(t, cfg.Location, "2026-03-06 16:00")
	tests := []struct {
		name  string
		hours int
		want  time.Time
	}{
		{"an hour is 60 Sundays after the holidays", 1, at(t, cfg.Location, "2029-01-07 10:01").AddDate(0, 0, 7*59)},
		{"more than the calendar holds in 20 years", 100, start.Add(calendar.MaxSpan)},
		{"more hours than MaxSpan", 1 << 40, start.Add(calendar.MaxSpan)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			got := c.Deadline(start, tc.hours)
			assert.True(t, tc.want.Equal(got), "got %s, want %s", got, tc.want)
			assert.Less(t, time.Since(began), 100*time.Millisecond)
		})
	}
	t.Run("Remaining counts at most MaxSpan", func(t *testing.T) {
		far := c.Remaining(start, start.AddDate(100, 0, 0))
		assert.Equal(t, c.Remaining(start, start.Add(calendar.MaxSpan)), far)
		assert.Equal(t, -far, c.Remaining(start.AddDate(100, 0, 0), start))
	})
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	tests := []struct {
		name     string
		cfg      calendar.Config
		wantText []string
	}{
		{"unknown mode", working(t, saigon, func(c *calendar.Config) { c.Mode = "days" }), []string{"config key sla.calendar", `"days"`}},
		{"mode in the wrong case", working(t, saigon, func(c *calendar.Config) { c.Mode = "WorkingHours" }), []string{"sla.calendar"}},
		{"no time zone", working(t, saigon, func(c *calendar.Config) { c.Location = nil }), []string{"config key business.timeZone"}},
		{"no working day", working(t, saigon, days()), []string{"config key business.workingDays", "at least one day"}},
		{"unknown day", working(t, saigon, days("Mon", "Funday")), []string{"business.workingDays", `"Funday"`}},
		{"empty day name", working(t, saigon, days("Mon", "")), []string{"business.workingDays"}},
		{"day listed twice", working(t, saigon, days("Mon", "mon")), []string{"business.workingDays", "twice"}},
		{"no range", working(t, saigon, ranges()), []string{"config key business.workingHours", "at least one range"}},
		{"hours without minutes", working(t, saigon, ranges("8-17")), []string{"business.workingHours", `"8-17"`}},
		{"one time only", working(t, saigon, ranges("08:00")), []string{"business.workingHours"}},
		{"ends before it starts", working(t, saigon, ranges("17:00-08:00")), []string{"business.workingHours", "end after it starts"}},
		{"empty range", working(t, saigon, ranges("08:00-08:00")), []string{"business.workingHours", "end after it starts"}},
		{"out of order", working(t, saigon, ranges("13:00-17:00", "08:00-12:00")), []string{"business.workingHours", "order"}},
		{"overlapping", working(t, saigon, ranges("08:00-13:00", "12:00-17:00")), []string{"business.workingHours", "overlaps"}},
		{"hour 25", working(t, saigon, ranges("08:00-25:00")), []string{"business.workingHours"}},
		{"minute 60", working(t, saigon, ranges("08:60-09:00")), []string{"business.workingHours"}},
		{"24:00 as a start", working(t, saigon, ranges("24:00-24:00")), []string{"business.workingHours"}},
		{"signed hour", working(t, saigon, ranges("+8:00-17:00")), []string{"business.workingHours"}},
		{"holiday month 13", working(t, saigon, holidays("2026-13-01")), []string{"config key business.holidays", `"2026-13-01"`}},
		{"holiday in another format", working(t, saigon, holidays("01/05/2026")), []string{"business.holidays"}},
		{"holiday without leading zeros", working(t, saigon, holidays("2026-5-1")), []string{"business.holidays"}},
		{"every problem is reported", working(t, saigon, days(), ranges("x"), holidays("y")),
			[]string{"business.workingDays", "business.workingHours", "business.holidays"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := calendar.New(tc.cfg)
			require.Error(t, err)
			assert.Nil(t, c)
			for _, s := range tc.wantText {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestNewAcceptsConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  calendar.Config
		mode calendar.Mode
	}{
		{"defaults", working(t, saigon), calendar.WorkingHours},
		{"day names in any case, short or long", working(t, saigon, days("monday", " TUE ", "Wednesday", "sat")), calendar.WorkingHours},
		{"one-digit hours and 24:00", working(t, saigon, ranges("7:30-12:00", "13:00-24:00")), calendar.WorkingHours},
		{"adjacent ranges", working(t, saigon, ranges("08:00-12:00", "12:00-17:00")), calendar.WorkingHours},
		{"holidays repeated, unsorted and on weekends", working(t, saigon, holidays("2026-05-01", "2026-01-01", "2026-05-01", "2026-05-02")), calendar.WorkingHours},
		{"hours mode ignores the business keys", calendar.Config{Mode: calendar.Hours, WorkingDays: []string{"nope"}}, calendar.Hours},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := calendar.New(tc.cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.mode, c.Mode())
		})
	}
}

func BenchmarkDeadline(b *testing.B) {
	var hols []string
	for y := 2026; y <= 2031; y++ {
		for _, md := range []string{"-01-01", "-04-03", "-04-06", "-05-01", "-05-14", "-05-25", "-10-03", "-12-24", "-12-25", "-12-26"} {
			hols = append(hols, strconv.Itoa(y)+md)
		}
	}
	for _, bc := range []struct {
		name  string
		zone  string
		hours int
	}{
		{"saigon/8h", saigon, 8},
		{"saigon/10000h", saigon, 10000},
		{"berlin/168h", berlin, 168},
		{"berlin/10000h", berlin, 10000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := mustNew(b, working(b, bc.zone, holidays(hols...)))
			start := at(b, zone(b, bc.zone), "2026-03-06 16:00")
			for b.Loop() {
				c.Deadline(start, bc.hours)
			}
		})
	}
}

func BenchmarkRemaining(b *testing.B) {
	c := mustNew(b, working(b, berlin))
	start := at(b, zone(b, berlin), "2026-03-06 16:00")
	deadline := c.Deadline(start, 10000)
	for b.Loop() {
		c.Remaining(start, deadline)
	}
}
