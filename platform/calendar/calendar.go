// Package calendar turns SLA hours into deadlines, and deadlines back into
// hours remaining. A workflow step's SLA is a number of hours; whether a
// weekend, a night or a public holiday counts towards it is a business
// decision (sla.calendar), so every deadline and every inbox's
// hoursRemaining comes from one Calendar and the two never disagree.
//
// In the wall-clock mode (sla.calendar: hours, the seed's behaviour) an SLA
// hour is an hour. In the working-time mode (sla.calendar: workingHours) only
// the time inside business.workingHours on business.workingDays counts, in
// business.timeZone, skipping business.holidays.
//
// Working time is worked out per local calendar day: each day's ranges become
// instants with time.Date in the business location, so 08:00-17:00 stays
// 08:00-17:00 on the office clock across daylight-saving changes, and a range
// that a clock change shortens or lengthens counts the time that really
// passes. Runs of ordinary days are skipped a week at a time, so a deadline
// thousands of hours out costs a little work per holiday and per clock change
// on the way, not per minute or per day.
package calendar

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Mode is the value of sla.calendar.
type Mode string

const (
	// Hours counts plain wall-clock hours.
	Hours Mode = "hours"
	// WorkingHours counts only working time.
	WorkingHours Mode = "workingHours"
)

// The defaults of the business.* keys, in the comma-separated form an
// environment variable carries them.
const (
	DefaultWorkingDays  = "Mon,Tue,Wed,Thu,Fri"
	DefaultWorkingHours = "08:00-17:00"
)

// MaxSpan bounds how far past its start a deadline is looked for, and how
// much time Remaining counts: 20 years (of 365.25 days). No real SLA comes
// near it; the bound keeps an absurd number of hours from running the search
// for ever, and a longer SLA simply ends MaxSpan after its start.
const MaxSpan = maxSpanDays * 24 * time.Hour

const (
	maxSpanDays   = 7305
	secondsPerDay = 24 * 60 * 60
)

// Config chooses and describes the calendar. Mode is the sla.calendar key,
// so a module's sla section can embed Config (mapstructure ",squash"); the
// other fields are the platform's business.* keys, which the module copies
// from the platform configuration. Only Mode WorkingHours reads them.
type Config struct {
	// Mode is hours (also when empty) or workingHours.
	Mode Mode `mapstructure:"calendar"`
	// Location is business.timeZone, loaded.
	Location *time.Location `mapstructure:"-"`
	// WorkingDays is business.workingDays: day names Mon … Sun (or Monday …
	// Sunday), case-insensitive.
	WorkingDays []string `mapstructure:"-"`
	// WorkingHours is business.workingHours: ranges "HH:MM-HH:MM" of local
	// time, in order of the day and not overlapping; 24:00 may end the last.
	WorkingHours []string `mapstructure:"-"`
	// Holidays is business.holidays: dates "YYYY-MM-DD" that are not worked.
	Holidays []string `mapstructure:"-"`
}

// Calendar computes deadlines and remaining SLA time. It is immutable and
// safe for concurrent use. A nil *Calendar counts wall-clock hours.
type Calendar struct {
	mode     Mode
	loc      *time.Location
	workday  [7]bool // by time.Weekday
	nWork    int64   // working days per week
	ranges   []span
	dayWork  time.Duration // working time of a day with no clock change
	holidays []int64       // sorted day numbers of holidays that fall on working days
}

// span is a working range in minutes after local midnight, [start, end).
type span struct{ start, end int }

// New checks cfg and builds its calendar. Every problem is reported, each
// naming its configuration key.
func New(cfg Config) (*Calendar, error) {
	switch cfg.Mode {
	case "", Hours:
		return &Calendar{mode: Hours}, nil
	case WorkingHours:
	default:
		return nil, fmt.Errorf("config key sla.calendar: must be %s or %s, got %q", Hours, WorkingHours, cfg.Mode)
	}
	c := &Calendar{mode: WorkingHours, loc: cfg.Location}
	var errs []error
	if c.loc == nil {
		errs = append(errs, errors.New("config key business.timeZone: no time zone given"))
	}
	var err error
	if c.workday, err = parseDays(cfg.WorkingDays); err != nil {
		errs = append(errs, fmt.Errorf("config key business.workingDays: %w", err))
	}
	if c.ranges, err = parseRanges(cfg.WorkingHours); err != nil {
		errs = append(errs, fmt.Errorf("config key business.workingHours: %w", err))
	}
	holidays, err := parseHolidays(cfg.Holidays)
	if err != nil {
		errs = append(errs, fmt.Errorf("config key business.holidays: %w", err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, w := range c.workday {
		if w {
			c.nWork++
		}
	}
	for _, r := range c.ranges {
		c.dayWork += time.Duration(r.end-r.start) * time.Minute
	}
	for _, h := range holidays {
		if c.workday[weekday(h)] {
			c.holidays = append(c.holidays, h)
		}
	}
	return c, nil
}

// Mode reports how the calendar counts.
func (c *Calendar) Mode() Mode {
	if c == nil {
		return Hours
	}
	return c.mode
}

// Deadline returns the instant hours of SLA time after start. In working
// time a start outside working hours begins counting at the next working
// instant, and a deadline that falls exactly at the end of a range is that
// end (Friday 17:00, not Monday 08:00). Hours of zero or less give start; a
// deadline further than MaxSpan away is start + MaxSpan.
func (c *Calendar) Deadline(start time.Time, hours int) time.Time {
	if hours <= 0 {
		return start
	}
	if hours > int(MaxSpan/time.Hour) {
		return start.Add(MaxSpan)
	}
	d := time.Duration(hours) * time.Hour
	if c.Mode() == Hours {
		return start.Add(d)
	}
	if end, limit := c.workingDeadline(start, d), start.Add(MaxSpan); end.Before(limit) {
		return end
	}
	return start.Add(MaxSpan)
}

// Remaining returns the SLA time from now until deadline, counted as
// Deadline counts it: for any start, Remaining(start, Deadline(start, h)) is
// h hours (unless the deadline was capped at MaxSpan). When the deadline has
// passed it is negative, and in working time its size is the working time
// between deadline and now, so "hours overdue" does not grow over a weekend.
// In working time it is also zero from closing on Friday until a deadline
// at Monday's opening: whether a document is overdue is now.After(deadline),
// not the sign of Remaining. Only MaxSpan of time is counted either way.
func (c *Calendar) Remaining(now, deadline time.Time) time.Duration {
	if c.Mode() == Hours {
		return max(min(deadline.Sub(now), MaxSpan), -MaxSpan)
	}
	if deadline.Before(now) {
		return -c.workingBetween(deadline, now)
	}
	return c.workingBetween(now, deadline)
}

// workingDeadline walks the days from start's until rem working time has
// been used up. Days that need no care are skipped in bulk; the first day,
// holidays and days near a clock change are counted range by range.
func (c *Calendar) workingDeadline(start time.Time, rem time.Duration) time.Time {
	first := c.dayOf(start)
	last := first + maxSpanDays
	zc := zoneChanges{valid: math.MinInt64}
	for dn := first; dn <= last; dn++ {
		if dn > first {
			if obs := c.nextSpecial(dn, last+1, &zc); obs > dn {
				total := time.Duration(c.workdays(dn, obs)) * c.dayWork
				if rem > total {
					rem -= total
					dn = obs - 1
					continue
				}
				// The deadline lies in this run: skip the whole working days
				// before its day, which is then counted below.
				k := int64((rem - 1) / c.dayWork)
				rem -= time.Duration(k) * c.dayWork
				dn = c.afterWorkdays(dn, k)
			}
		}
		if !c.isWorkday(dn) {
			continue
		}
		y, m, d := dateOf(dn)
		for _, r := range c.ranges {
			from, to := c.instants(y, m, d, r)
			if from.Before(start) {
				from = start
			}
			if avail := to.Sub(from); avail > 0 {
				if rem <= avail {
					return from.Add(rem)
				}
				rem -= avail
			}
		}
	}
	return start.Add(MaxSpan)
}

// workingBetween returns the working time in [a, b), a <= b.
func (c *Calendar) workingBetween(a, b time.Time) time.Duration {
	if b.Sub(a) > MaxSpan {
		b = a.Add(MaxSpan)
	}
	first, last := c.dayOf(a), c.dayOf(b)
	zc := zoneChanges{valid: math.MinInt64}
	var total time.Duration
	for dn := first; dn <= last; dn++ {
		if dn > first && dn < last {
			if obs := c.nextSpecial(dn, last, &zc); obs > dn {
				total += time.Duration(c.workdays(dn, obs)) * c.dayWork
				dn = obs - 1
				continue
			}
		}
		if !c.isWorkday(dn) {
			continue
		}
		y, m, d := dateOf(dn)
		for _, r := range c.ranges {
			from, to := c.instants(y, m, d, r)
			if from.Before(a) {
				from = a
			}
			if to.After(b) {
				to = b
			}
			if to.After(from) {
				total += to.Sub(from)
			}
		}
	}
	return total
}

// nextSpecial returns the first day in [dn, end) whose working time may
// differ from the nominal dayWork of its weekday, or end: a holiday on a
// working day, or a day within one day of a change of the zone's offset
// (a conservative window, whatever hour the change happens at).
func (c *Calendar) nextSpecial(dn, end int64, zc *zoneChanges) int64 {
	if i, _ := slices.BinarySearch(c.holidays, dn); i < len(c.holidays) && c.holidays[i] < end {
		end = c.holidays[i]
	}
	return min(end, max(dn, zc.windowFrom(c, dn)))
}

// zoneChanges remembers the next change of the zone's offset during one
// walk, so that it is looked up once per change rather than once per step.
type zoneChanges struct {
	window int64 // first day of the window around the change: its day - 1
	valid  int64 // last day for which window is the next one
}

// windowFrom returns the start of the window of the first offset change
// after the start of day dn-1 (a window [day-1, day+1] that ends on dn or
// later), or math.MaxInt64 when the zone changes no more.
func (zc *zoneChanges) windowFrom(c *Calendar, dn int64) int64 {
	if dn > zc.valid {
		y, m, d := dateOf(dn - 1)
		if _, change := time.Date(y, m, d, 0, 0, 0, 0, c.loc).ZoneBounds(); change.IsZero() {
			zc.window, zc.valid = math.MaxInt64, math.MaxInt64
		} else {
			day := c.dayOf(change)
			zc.window, zc.valid = day-1, day+1
		}
	}
	return zc.window
}

// workdays counts the working weekdays in [a, b), holidays aside.
func (c *Calendar) workdays(a, b int64) int64 {
	weeks := (b - a) / 7
	n := weeks * c.nWork
	for dn := a + 7*weeks; dn < b; dn++ {
		if c.workday[weekday(dn)] {
			n++
		}
	}
	return n
}

// afterWorkdays skips k working weekdays from dn and returns the next
// working weekday.
func (c *Calendar) afterWorkdays(dn, k int64) int64 {
	dn += 7 * (k / c.nWork)
	k %= c.nWork
	for ; ; dn++ {
		if c.workday[weekday(dn)] {
			if k == 0 {
				return dn
			}
			k--
		}
	}
}

func (c *Calendar) isWorkday(dn int64) bool {
	if !c.workday[weekday(dn)] {
		return false
	}
	_, holiday := slices.BinarySearch(c.holidays, dn)
	return !holiday
}

// instants converts a range of a local date to instants. time.Date counts
// the minutes on the wall clock of that date, whatever the offset does.
func (c *Calendar) instants(y int, m time.Month, d int, r span) (time.Time, time.Time) {
	return time.Date(y, m, d, 0, r.start, 0, 0, c.loc), time.Date(y, m, d, 0, r.end, 0, 0, c.loc)
}

// dayOf returns the day number of t's local date.
func (c *Calendar) dayOf(t time.Time) int64 {
	y, m, d := t.In(c.loc).Date()
	return dayNumber(y, m, d)
}

// Days are numbered from 1970-01-01 (day 0), a Thursday.
func dayNumber(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / secondsPerDay
}

func dateOf(dn int64) (int, time.Month, int) {
	return time.Unix(dn*secondsPerDay, 0).UTC().Date()
}

func weekday(dn int64) time.Weekday {
	return time.Weekday(((dn % 7) + 7 + int64(time.Thursday)) % 7)
}

var dayNames = map[string]time.Weekday{
	"mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday, "thu": time.Thursday,
	"fri": time.Friday, "sat": time.Saturday, "sun": time.Sunday,
}

func parseDays(names []string) ([7]bool, error) {
	var days [7]bool
	if len(names) == 0 {
		return days, errors.New("must name at least one day, like Mon,Tue,Wed,Thu,Fri")
	}
	for _, name := range names {
		key := strings.ToLower(strings.TrimSpace(name))
		wd, ok := dayNames[key]
		if !ok && len(key) > 3 {
			wd, ok = dayNames[key[:3]]
			ok = ok && strings.EqualFold(key, wd.String())
		}
		if !ok {
			return days, fmt.Errorf("%q is not a day name (Mon, Tue, Wed, Thu, Fri, Sat, Sun)", name)
		}
		if days[wd] {
			return days, fmt.Errorf("%q is listed twice", name)
		}
		days[wd] = true
	}
	return days, nil
}

func parseRanges(texts []string) ([]span, error) {
	if len(texts) == 0 {
		return nil, errors.New("must list at least one range, like 08:00-17:00")
	}
	spans := make([]span, 0, len(texts))
	for i, text := range texts {
		from, to, ok := strings.Cut(strings.TrimSpace(text), "-")
		start, okStart := parseClock(from, false)
		end, okEnd := parseClock(to, true)
		if !ok || !okStart || !okEnd {
			return nil, fmt.Errorf("%q is not a range of times like 08:00-17:00", text)
		}
		if end <= start {
			return nil, fmt.Errorf("range %q must end after it starts", text)
		}
		if i > 0 && start < spans[i-1].end {
			return nil, fmt.Errorf("range %q overlaps or comes before %q: list ranges in the order of the day, without overlaps", text, texts[i-1])
		}
		spans = append(spans, span{start, end})
	}
	return spans, nil
}

// parseClock reads H:MM or HH:MM as minutes after midnight; 24:00 is allowed
// only as the end of a range.
func parseClock(s string, isEnd bool) (int, bool) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 || !digits(h) || !digits(m) {
		return 0, false
	}
	hh, _ := strconv.Atoi(h)
	mm, _ := strconv.Atoi(m)
	switch {
	case mm > 59:
		return 0, false
	case hh == 24 && mm == 0 && isEnd:
		return 24 * 60, true
	case hh > 23:
		return 0, false
	}
	return hh*60 + mm, true
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func parseHolidays(texts []string) ([]int64, error) {
	days := make([]int64, 0, len(texts))
	for _, text := range texts {
		t, err := time.Parse(time.DateOnly, strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("%q is not a date like 2026-01-01", text)
		}
		days = append(days, dayNumber(t.Date()))
	}
	slices.Sort(days)
	return slices.Compact(days), nil
}
