package partition

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Separator joins a partition's values into its name.
const Separator = "$"

// MaxValueLen is the longest partition value, in bytes.
const MaxValueLen = 200

// reservedPrefix starts the names Fluss keeps for itself; a created
// partition's values may not start with it.
const reservedPrefix = "__"

// Name is a partition's name: its values joined by Separator, in
// partition-key order.
func Name(values []string) string { return strings.Join(values, Separator) }

// Values splits a partition name into one value per key.
func Values(keys []string, name string) ([]string, error) {
	values := strings.Split(name, Separator)
	if len(values) != len(keys) {
		return nil, errs.New(errs.InvalidArgument, "partition name %s has %d values; the partition keys %s want %d",
			errs.Quote(name), len(values), javaList(keys), len(keys))
	}
	return values, nil
}

// Qualified is a partition as error messages name it: key=value for every
// key, in key order, joined by "/" (Fluss's qualified partition name), each
// value cut as a client's string is (errs.Cut).
func Qualified(keys, values []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + errs.Cut(values[i])
	}
	return strings.Join(parts, "/")
}

// Resolve orders a spec's values by the partition keys, checking that it
// names exactly those keys and that every value is valid; creating also
// refuses the reserved prefix. The messages are Fluss's.
func Resolve(table string, keys []string, spec map[string]string, creating bool) ([]string, error) {
	if len(spec) != len(keys) {
		return nil, errs.New(errs.InvalidArgument, "PartitionSpec size is not equal to partition keys size for partitioned table %s.", table)
	}
	values := make([]string, len(keys))
	for i, k := range keys {
		v, ok := spec[k]
		if !ok {
			return nil, errs.New(errs.InvalidArgument, "PartitionSpec %s does not contain partition key '%s' for partitioned table %s.",
				specString(spec), k, table)
		}
		if err := ValidateValue(v, creating); err != nil {
			return nil, err
		}
		values[i] = v
	}
	return values, nil
}

// ValidateValue checks one partition value by Fluss's naming rules.
func ValidateValue(v string, creating bool) error {
	if reason := invalidReason(v, creating); reason != "" {
		return errs.New(errs.InvalidArgument, "The partition value %s is invalid: %s", errs.Cut(v), reason)
	}
	return nil
}

func invalidReason(v string, creating bool) string {
	switch {
	case v == "":
		return "the empty string is not allowed"
	case v == ".":
		return "'.' is not allowed"
	case v == "..":
		return "'..' is not allowed"
	case len(v) > MaxValueLen:
		return fmt.Sprintf("the length of '%s' is longer than the max allowed length %d", errs.Cut(v), MaxValueLen)
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Sprintf("'%s' contains one or more characters other than ASCII alphanumerics, '_' and '-'", errs.Cut(v))
		}
	}
	if creating && strings.HasPrefix(v, reservedPrefix) {
		return "'" + reservedPrefix + "' is not allowed as prefix, since it is reserved for internal databases/internal tables/internal partitions in Fluss server"
	}
	return ""
}

// Matches reports whether a partition's values agree with a partial spec
// (every key the spec names has the spec's value).
func Matches(keys, values []string, partial map[string]string) bool {
	for i, k := range keys {
		if v, ok := partial[k]; ok && v != values[i] {
			return false
		}
	}
	return true
}

// CheckPartial checks that a partial spec names only partition keys.
func CheckPartial(table string, keys []string, partial map[string]string) error {
	for k := range partial {
		if !slices.Contains(keys, k) {
			return errs.New(errs.InvalidArgument, "table %s: %s is not a partition key (partition keys: %s)", table, errs.Quote(k), javaList(keys))
		}
	}
	return nil
}

// specString prints a spec as Fluss's PartitionSpec does, keys sorted.
func specString(spec map[string]string) string {
	parts := make([]string, 0, len(spec))
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		parts = append(parts, errs.Cut(k)+"="+errs.Cut(spec[k]))
	}
	return "PartitionSpec{" + strings.Join(parts, ", ") + "}"
}

// javaList prints names as Java prints a List, which Fluss's messages show.
func javaList(names []string) string { return "[" + strings.Join(names, ", ") + "]" }
