// Package autopartition owns Fluss's automatic partitions of a table
// (`table.auto-partition.*`): parsing and validating the options, the
// partition value of an instant, which partitions a check creates and drops,
// and the out-of-date rule for partitions created by hand or by writers. It
// is pure: time comes in as an argument, and creating and dropping
// partitions is the engine's.
package autopartition

//lint:file-ignore ST1005 the errors are Fluss's messages, word for word (capitalized, with a full stop)

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgate-io/fluxgate/errs"
)

// The table options, Fluss's names.
const (
	OptPrefix       = "table.auto-partition."
	OptEnabled      = OptPrefix + "enabled"
	OptKey          = OptPrefix + "key"
	OptTimeUnit     = OptPrefix + "time-unit"
	OptTimeFormat   = OptPrefix + "time-format"
	OptTimeZone     = OptPrefix + "time-zone"
	OptNumPrecreate = OptPrefix + "num-precreate"
	OptNumRetention = OptPrefix + "num-retention"
)

// Defaults, Fluss's.
const (
	DefaultNumPrecreate = 2
	DefaultNumRetention = 7
)

// TimeUnit is the period of one automatic partition.
type TimeUnit int

// The time units, Fluss's AutoPartitionTimeUnit.
const (
	Year TimeUnit = iota
	Quarter
	Month
	Day
	Hour
)

var unitNames = [...]string{Year: "YEAR", Quarter: "QUARTER", Month: "MONTH", Day: "DAY", Hour: "HOUR"}

func (u TimeUnit) String() string { return unitNames[u] }

// OptionList names the options, for a message about an unknown one.
func OptionList() string {
	return strings.Join([]string{OptEnabled, OptKey, OptTimeUnit, OptTimeFormat, OptTimeZone, OptNumPrecreate, OptNumRetention}, ", ")
}

// IsOption reports whether key is one of this package's options (or claims
// to be: an unknown key with the prefix is refused by ParseOption).
func IsOption(key string) bool { return strings.HasPrefix(key, OptPrefix) }

// ParseOption checks one option's value on its own and returns its stored
// form. ok is false for a key this package does not know.
func ParseOption(key, value string) (stored string, ok bool, err error) {
	v := strings.TrimSpace(value)
	switch key {
	case OptEnabled:
		switch strings.ToLower(v) {
		case "true", "false":
			return strings.ToLower(v), true, nil
		}
		return "", true, fmt.Errorf("expected true or false")
	case OptKey:
		return v, true, nil
	case OptTimeUnit:
		u, err := parseUnit(v)
		if err != nil {
			return "", true, err
		}
		return strings.ToLower(u.String()), true, nil
	case OptTimeFormat:
		return value, true, nil // checked against the unit by Validate
	case OptTimeZone:
		if _, err := loadZone(v); err != nil {
			return "", true, err
		}
		return v, true, nil
	case OptNumPrecreate, OptNumRetention:
		n, err := strconv.ParseInt(v, 10, 32) // Java's int
		if err != nil {
			return "", true, fmt.Errorf("expected an integer")
		}
		return strconv.FormatInt(n, 10), true, nil
	}
	return "", false, nil
}

// Validate checks the options of a table whose partition keys are given, as
// Fluss checks them at create (and this server at alter too), and fills in
// the defaults that describe-table shows: enabled false, time-unit day,
// num-precreate 2 (0 with more than one partition key, as Fluss forces it)
// and num-retention 7. The time format, key and zone stay unset when not
// given: each default follows from something else. isDate reports whether a
// column is of type DATE. The options must have passed ParseOption.
func Validate(opts map[string]string, partitionKeys []string, isDate func(col string) bool) error {
	enabled := opts[OptEnabled] == "true"
	if len(partitionKeys) == 0 {
		if enabled {
			return fmt.Errorf("Currently, auto partition is only supported for partitioned table, please set table property '%s' to false.", OptEnabled)
		}
		return nil
	}
	precreate := DefaultNumPrecreate
	if len(partitionKeys) > 1 {
		precreate = 0
	}
	for k, v := range map[string]string{
		OptEnabled: "false", OptTimeUnit: strings.ToLower(Day.String()),
		OptNumPrecreate: strconv.Itoa(precreate), OptNumRetention: strconv.Itoa(DefaultNumRetention),
	} {
		if _, set := opts[k]; !set {
			opts[k] = v
		}
	}
	unit, err := parseUnit(opts[OptTimeUnit])
	if err != nil {
		return err
	}
	if pattern, ok := opts[OptTimeFormat]; ok {
		if _, err := ParseFormat(pattern, unit); err != nil {
			return fmt.Errorf("Invalid table property '%s': %w", OptTimeFormat, err)
		}
	}
	// Fluss checks the key only when it must be set; a key that is not a
	// partition key would leave no time value to check partitions by.
	key := opts[OptKey]
	if key != "" && !slices.Contains(partitionKeys, key) {
		return fmt.Errorf("The specified key for auto partitioned table is not a partition key. Your key '%s' is not in key list [%s]", key, strings.Join(partitionKeys, ", "))
	}
	if !enabled {
		return nil
	}
	if len(partitionKeys) > 1 {
		if key == "" {
			return fmt.Errorf("Currently, auto partitioned table must set one auto partition key when it has multiple partition keys. Please set table property '%s'.", OptKey)
		}
		if n, _ := strconv.Atoi(opts[OptNumPrecreate]); n > 0 {
			return fmt.Errorf("For a partitioned table with multiple partition keys, auto pre-create is unsupported and this value must be set to 0, but is %d", n)
		}
	}
	if key == "" {
		key = partitionKeys[0]
	}
	if isDate(key) {
		if unit != Day {
			return fmt.Errorf("Table property '%s' must be '%s' when auto partition key '%s' has DATE type.", OptTimeUnit, Day, key)
		}
		if opts[OptTimeFormat] != "yyyy-MM-dd" {
			return fmt.Errorf("Table property '%s' must be '%s' when auto partition key '%s' has DATE type.", OptTimeFormat, "yyyy-MM-dd", key)
		}
	}
	return nil
}

// Strategy is a table's automatic partitioning, read from its stored options.
type Strategy struct {
	Enabled bool
	// Key is the partition key whose value is the time; KeyIndex its place
	// in the partition keys, and so in a partition name's '$'-joined values.
	Key      string
	KeyIndex int
	Unit     TimeUnit
	Format   *Format
	// FormatSet is whether time-format is set: then, as in Fluss, manually
	// created partitions must match it even with auto partitioning off.
	FormatSet    bool
	Zone         *time.Location
	NumPrecreate int
	// NumRetention is how many past periods are kept; negative keeps all.
	NumRetention int
	// single is whether the key is the only partition key (so a value is a
	// partition name, and pre-creation is possible).
	single bool
}

// FromOptions reads the strategy of a partitioned table from its stored
// (validated) options; defaultZone is the zone when time-zone is not set
// (Fluss: the server's).
func FromOptions(opts map[string]string, partitionKeys []string, defaultZone *time.Location) (*Strategy, error) {
	if len(partitionKeys) == 0 {
		return nil, fmt.Errorf("auto partitioning needs a partitioned table")
	}
	s := &Strategy{
		Enabled:      opts[OptEnabled] == "true",
		Key:          opts[OptKey],
		Zone:         defaultZone,
		NumPrecreate: DefaultNumPrecreate,
		NumRetention: DefaultNumRetention,
		single:       len(partitionKeys) == 1,
	}
	if s.Key == "" {
		s.Key = partitionKeys[0]
	}
	s.KeyIndex = slices.Index(partitionKeys, s.Key)
	if s.KeyIndex < 0 {
		return nil, fmt.Errorf("%s %s is not a partition key", OptKey, errs.Quote(s.Key))
	}
	var err error
	if s.Unit, err = parseUnit(opts[OptTimeUnit]); err != nil {
		return nil, err
	}
	s.Format = DefaultFormat(s.Unit)
	if pattern, ok := opts[OptTimeFormat]; ok {
		s.FormatSet = true
		if s.Format, err = ParseFormat(pattern, s.Unit); err != nil {
			return nil, err
		}
	}
	if z, ok := opts[OptTimeZone]; ok {
		if s.Zone, err = loadZone(z); err != nil {
			return nil, err
		}
	}
	for key, dst := range map[string]*int{OptNumPrecreate: &s.NumPrecreate, OptNumRetention: &s.NumRetention} {
		if v, ok := opts[key]; ok {
			if *dst, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("%s = %s: %w", key, errs.Quote(v), err)
			}
		}
	}
	return s, nil
}

// parseUnit parses a time unit, case-insensitive; "" is DAY.
func parseUnit(v string) (TimeUnit, error) {
	if v == "" {
		return Day, nil
	}
	for u, name := range unitNames {
		if strings.EqualFold(v, name) {
			return TimeUnit(u), nil
		}
	}
	return 0, fmt.Errorf("expected one of HOUR, DAY, MONTH, QUARTER, YEAR")
}

// loadZone loads an IANA zone name ("UTC" included).
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("expected an IANA time zone name such as UTC or Europe/Berlin")
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %s: expected an IANA time zone name such as UTC or Europe/Berlin", errs.Quote(name))
	}
	return z, nil
}
