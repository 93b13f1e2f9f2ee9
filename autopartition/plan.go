package autopartition

import (
	"slices"
	"strings"
	"time"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Value returns the partition value of the period offset periods after the
// one holding now, in the strategy's zone. Hours step on the timeline (a
// zone's repeated hour gives two instants one value; a skipped hour has no
// value); days, months, quarters and years step on the local calendar, as
// Java's ZonedDateTime.plusHours and plusDays/plusMonths/plusYears do.
func (s *Strategy) Value(now time.Time, offset int) string {
	var c civil
	if s.Unit == Hour {
		t := time.Unix(now.Unix()+int64(offset)*3600, 0).In(s.Zone)
		c = civil{t.Year(), int(t.Month()), t.Day(), t.Hour()}
	} else {
		t := now.In(s.Zone)
		y, m, d := t.Year(), t.Month(), t.Day()
		switch s.Unit {
		case Day:
			d += offset
		case Month:
			m, d = m+time.Month(offset), 1
		case Quarter:
			m, d = m+time.Month(3*offset), 1
		case Year:
			y, d = y+offset, 1
		}
		n := time.Date(y, m, d, 0, 0, 0, 0, time.UTC) // normalizes the calendar arithmetic
		c = civil{n.Year(), int(n.Month()), n.Day(), 0}
	}
	return s.Format.format(c)
}

// Plan is what one check does to a table.
type Plan struct {
	// Create are the partition values to create, current period first. A
	// value is the partition's name: only a table whose one partition key
	// is the time key pre-creates.
	Create []string
	// Drop are the names of the partitions to drop, in name order.
	Drop []string
}

// Plan says what a check at now does to a table with the given partitions
// (their names): create the current and next NumPrecreate-1 periods that do
// not exist, and drop the partitions whose time value is older than the
// NumRetention periods before now. A partition whose time value does not
// match the format is never dropped: it was not made by the time rule.
func (s *Strategy) Plan(now time.Time, partitions []string) Plan {
	var p Plan
	if s.NumRetention >= 0 {
		earliest := s.Value(now, -s.NumRetention)
		for _, name := range partitions {
			if v, ok := s.timeValue(name); ok && v < earliest {
				p.Drop = append(p.Drop, name)
			}
		}
		slices.Sort(p.Drop)
	}
	if s.single {
		for i := 0; i < s.NumPrecreate; i++ {
			if v := s.Value(now, i); !slices.Contains(partitions, v) {
				p.Create = append(p.Create, v)
			}
		}
	}
	return p
}

// CheckCreate checks a partition about to be created by hand or by a writer
// (spec: partition key → value), as Fluss's validateAutoPartitionTime: with
// a time format set or auto partitioning on, the time value must match the
// format (INVALID_ARGUMENT); with auto partitioning on, it must not be older
// than the earliest retained period (FAILED_PRECONDITION), which the next
// check would drop.
func (s *Strategy) CheckCreate(now time.Time, spec map[string]string) error {
	if !s.Enabled && !s.FormatSet {
		return nil
	}
	v, ok := spec[s.Key]
	if !ok || !s.Format.Matches(v) {
		return errs.New(errs.InvalidArgument, "Partition value '%s' does not match the expected format '%s' for auto-partition time unit '%s'.", v, s.Format, s.Unit)
	}
	if !s.Enabled || s.NumRetention < 0 {
		return nil
	}
	if earliest := s.Value(now, -s.NumRetention); v < earliest {
		return errs.New(errs.FailedPrecondition, "Partition value '%s' is out-of-date. The earliest retained partition is '%s'.", v, earliest)
	}
	return nil
}

// timeValue returns the time key's value in a partition name, and whether it
// matches the format.
func (s *Strategy) timeValue(name string) (string, bool) {
	values := strings.Split(name, "$")
	if s.KeyIndex >= len(values) {
		return "", false
	}
	v := values[s.KeyIndex]
	return v, s.Format.Matches(v)
}
