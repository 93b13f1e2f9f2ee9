package catalog

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgate-io/fluxgate/autopartition"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/sqltype"
)

// Option keys understood by the catalog (PROTOCOL.md §2, Fluss's names).
const (
	OptBucketNum              = "bucket.num"
	OptBucketKey              = "bucket.key"
	OptMergeEngine            = "table.merge-engine"
	OptVersionColumn          = "table.merge-engine.versioned.ver-column"
	OptDeleteBehavior         = "table.delete.behavior"
	OptChangelogImage         = "table.changelog.image"
	OptAutoIncrementFields    = "auto-increment.fields"
	OptAutoIncrementCacheSize = "table.auto-increment.cache-size"
	OptLogTTL                 = "table.log.ttl"
	OptCompressionType        = "table.log.arrow.compression.type"
	OptZstdLevel              = "table.log.arrow.compression.zstd.level"
	OptDatalakeEnabled        = "table.datalake.enabled"
	OptDatalakeFormat         = "table.datalake.format"
	OptDatalakeFreshness      = "table.datalake.freshness"

	// OptCompactionTargetFileSize is the size lake compaction packs data
	// files toward, stored in bytes; unset means lake.DefaultCompactionTarget.
	OptCompactionTargetFileSize = "table.datalake.compaction.target-file-size"

	// LakeOptionPrefix starts the options passed to the lake table's
	// properties, without the prefix.
	LakeOptionPrefix = "iceberg."
)

// Option values, as stored (lower case).
const (
	MergeFirstRow    = "first_row"
	MergeVersioned   = "versioned"
	MergeAggregation = "aggregation"

	DeleteAllow   = "allow"
	DeleteIgnore  = "ignore"
	DeleteDisable = "disable"

	ChangelogFull = "full"
	ChangelogWAL  = "wal"

	CompressionNone = "none"
	CompressionLZ4  = "lz4_frame"
	CompressionZstd = "zstd"

	// AggDefault is the aggregate function of a column that names none.
	AggDefault = "last_value_ignore_nulls"
	// DefaultDelimiter is listagg's and string_agg's delimiter when none is set.
	DefaultDelimiter = ","
)

// MaxBuckets is the largest bucket.num (Fluss's max.bucket.num).
const MaxBuckets = 4096

// ParseDuration parses a Fluss duration: an integer and an optional unit
// (d, h, min/m, s/sec, ms, us, ns, or their long forms like "minutes"),
// case-insensitive, milliseconds when the unit is missing: `7d`, `3min`, `0ms`.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errs.New(errs.InvalidArgument, "invalid duration %s: expected an integer and a unit such as 7d, 3min, 30s or 500ms", errs.Quote(s))
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	unit, ok := durationUnits[strings.TrimSpace(t[i:])]
	if !ok {
		return 0, errs.New(errs.InvalidArgument, "invalid duration %s: unknown unit %s (expected d, h, min, s, ms, us or ns)", errs.Quote(s), errs.Quote(strings.TrimSpace(t[i:])))
	}
	if err != nil || n > math.MaxInt64/int64(unit) {
		return 0, errs.New(errs.InvalidArgument, "invalid duration %s: too large", errs.Quote(s))
	}
	return time.Duration(n) * unit, nil
}

// durationUnits are the unit labels of Flink's TimeUtils.
var durationUnits = func() map[string]time.Duration {
	m := map[string]time.Duration{"": time.Millisecond}
	for unit, labels := range map[time.Duration][]string{
		24 * time.Hour:   {"d", "day"},
		time.Hour:        {"h", "hour"},
		time.Minute:      {"min", "m", "minute"},
		time.Second:      {"s", "sec", "second"},
		time.Millisecond: {"ms", "milli", "millisecond"},
		time.Microsecond: {"us", "µs", "micro", "microsecond"},
		time.Nanosecond:  {"ns", "nano", "nanosecond"},
	} {
		for _, l := range labels {
			m[l] = unit
			if len(l) > 2 {
				m[l+"s"] = unit
			}
		}
	}
	return m
}()

// optionDefaults are the defaults that do not depend on the table.
var optionDefaults = map[string]string{
	OptLogTTL:                 "7d",
	OptCompressionType:        CompressionZstd,
	OptDatalakeEnabled:        "false",
	OptDatalakeFreshness:      "3min",
	OptAutoIncrementCacheSize: "100000",
	OptZstdLevel:              "1", // by measurement: docs/benchmarks.md, "Compression level"
}

// alterable are the options alter-table may set or reset.
var alterable = map[string]bool{OptDatalakeEnabled: true, OptDatalakeFreshness: true, OptLogTTL: true, OptCompactionTargetFileSize: true,
	autopartition.OptEnabled: true, autopartition.OptNumPrecreate: true, autopartition.OptNumRetention: true}

// valueParser checks an option value and returns its stored form, or an error
// saying what was expected.
type valueParser func(v string) (string, error)

var optionParsers = map[string]valueParser{
	OptBucketNum:              intRange(1, MaxBuckets),
	OptBucketKey:              columnList,
	OptMergeEngine:            enum(MergeFirstRow, MergeVersioned, MergeAggregation),
	OptVersionColumn:          columnList,
	OptDeleteBehavior:         enum(DeleteAllow, DeleteIgnore, DeleteDisable),
	OptChangelogImage:         enum(ChangelogFull, ChangelogWAL),
	OptAutoIncrementFields:    columnList,
	OptAutoIncrementCacheSize: intRange(1, math.MaxInt64),
	OptLogTTL:                 duration(true),
	OptCompressionType:        enum(CompressionNone, CompressionLZ4, CompressionZstd),
	OptZstdLevel:              intRange(1, 22),
	OptDatalakeEnabled:        enum("true", "false"),
	OptDatalakeFormat:         enum("iceberg"),
	OptDatalakeFreshness:      duration(false),

	OptCompactionTargetFileSize: memorySize,
}

// memorySize parses a Fluss memory size (an integer and an optional unit:
// b, kb, mb, gb, tb, powers of 1024) to bytes.
func memorySize(v string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	shift, ok := map[string]uint{"": 0, "b": 0, "k": 10, "kb": 10, "m": 20, "mb": 20, "g": 30, "gb": 30, "t": 40, "tb": 40}[strings.TrimSpace(t[i:])]
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if i == 0 || !ok || err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return "", fmt.Errorf("expected a positive size such as 128mb")
	}
	return strconv.FormatInt(n<<shift, 10), nil
}

// aggFunctions maps each aggregate function to the column types it accepts
// (Fluss's aggregation merge engine:
// fluss.apache.org/docs/table-design/merge-engines/aggregation/).
var aggFunctions = map[string]func(*sqltype.Type) bool{
	"sum":                      (*sqltype.Type).Numeric,
	"product":                  (*sqltype.Type).Numeric,
	"max":                      (*sqltype.Type).Ordered,
	"min":                      (*sqltype.Type).Ordered,
	"last_value":               anyType,
	AggDefault:                 anyType,
	"first_value":              anyType,
	"first_value_ignore_nulls": anyType,
	"listagg":                  (*sqltype.Type).Character,
	"string_agg":               (*sqltype.Type).Character,
	"bool_and":                 isRoot("BOOLEAN"),
	"bool_or":                  isRoot("BOOLEAN"),
	// Fluss's BYTES; VARBINARY(n) becomes BYTES there, BINARY(n) does not.
	"rbm32": isRoot("BYTES", "VARBINARY"),
	"rbm64": isRoot("BYTES", "VARBINARY"),
}

const numericTypes = "TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE or DECIMAL"

var aggTypeNames = map[string]string{
	"sum": numericTypes, "product": numericTypes,
	"max": "a numeric, character, DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ type", "min": "a numeric, character, DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ type",
	"listagg": "STRING or CHAR", "string_agg": "STRING or CHAR",
	"bool_and": "BOOLEAN", "bool_or": "BOOLEAN",
	"rbm32": "BYTES", "rbm64": "BYTES",
}

func anyType(*sqltype.Type) bool { return true }

func isRoot(roots ...string) func(*sqltype.Type) bool {
	return func(t *sqltype.Type) bool {
		for _, r := range roots {
			if t.Root() == r {
				return true
			}
		}
		return false
	}
}

// parseOption checks one option's value on its own; rules that involve the
// columns or other options are checked by the normalizer.
func parseOption(table, key, value string) (string, error) {
	if autopartition.IsOption(key) {
		return parseAutoPartitionOption(table, key, value)
	}
	parse, ok := optionParsers[key]
	if !ok {
		return "", errs.New(errs.InvalidArgument, "table %s: unknown option %s (see PROTOCOL.md §2 for the options understood; lake properties start with \"iceberg.\")", table, errs.Quote(key))
	}
	v, err := parse(value)
	if err != nil {
		return "", errs.New(errs.InvalidArgument, "table %s: option %s = %s: %v", table, errs.Quote(key), errs.Quote(value), err)
	}
	return v, nil
}

// aggOption splits `fields.<col>.agg` and `fields.<col>.<fn>.delimiter`; fn is
// "" for the former.
func aggOption(key string) (col, fn string, ok bool) {
	rest, ok := strings.CutPrefix(key, "fields.")
	if !ok {
		return "", "", false
	}
	if col, ok := strings.CutSuffix(rest, ".agg"); ok && col != "" {
		return col, "", true
	}
	for _, fn := range []string{"listagg", "string_agg"} {
		if col, ok := strings.CutSuffix(rest, "."+fn+".delimiter"); ok && col != "" {
			return col, fn, true
		}
	}
	return "", "", false
}

// normalizeAggFunction applies Fluss's spelling rules: case-insensitive, '-' ≡ '_'.
func normalizeAggFunction(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
}

func aggFunctionNames() string {
	names := make([]string, 0, len(aggFunctions))
	for n := range aggFunctions {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func intRange(lo, hi int64) valueParser {
	return func(v string) (string, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < lo || n > hi {
			if hi == math.MaxInt64 {
				return "", fmt.Errorf("expected a positive integer")
			}
			return "", fmt.Errorf("expected an integer from %d to %d", lo, hi)
		}
		return strconv.FormatInt(n, 10), nil
	}
}

func enum(values ...string) valueParser {
	return func(v string) (string, error) {
		l := strings.ToLower(strings.TrimSpace(v))
		for _, e := range values {
			if l == e {
				return l, nil
			}
		}
		return "", fmt.Errorf("expected one of %s", strings.Join(values, ", "))
	}
}

func duration(allowZero bool) valueParser {
	return func(v string) (string, error) {
		d, err := ParseDuration(v)
		if err != nil {
			return "", err
		}
		if d == 0 && !allowZero {
			return "", fmt.Errorf("expected a duration greater than 0, such as 3min")
		}
		return strings.ToLower(strings.TrimSpace(v)), nil
	}
}

// columnList trims the names of a comma-separated column list; whether they
// exist is checked against the columns.
func columnList(v string) (string, error) {
	names := splitList(v)
	for _, n := range names {
		if n == "" {
			return "", fmt.Errorf("expected comma-separated column names")
		}
	}
	return strings.Join(names, ","), nil
}

func splitList(v string) []string {
	names := strings.Split(v, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	return names
}
