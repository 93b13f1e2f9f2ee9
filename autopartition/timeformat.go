package autopartition

//lint:file-ignore ST1005 the errors are Fluss's messages, word for word (capitalized, with a full stop)

import (
	"fmt"
	"slices"
	"strings"
)

// Format is a validated auto-partition time format: the subset of Java's
// DateTimeFormatter patterns Fluss accepts (fields largest to smallest, each
// of fixed width, plus literals), so that its values sort as their times do.
type Format struct {
	pattern string
	tokens  []token
}

// field is a time field a format may contain, in Fluss's order.
type field int

const (
	fieldYear field = iota
	fieldQuarter
	fieldMonth
	fieldDay
	fieldHour
)

// fieldSpec is a field's name in Fluss's messages, its fixed width and its
// range when parsed.
var fieldSpecs = [...]struct {
	name     string
	width    int
	min, max int
}{
	fieldYear:    {"year", 4, 1, 9999},
	fieldQuarter: {"quarter", 1, 1, 4},
	fieldMonth:   {"month", 2, 1, 12},
	fieldDay:     {"day", 2, 1, 31}, // Java's smart parser takes 31 in any month
	fieldHour:    {"hour", 2, 0, 23},
}

func (f field) String() string { return fieldSpecs[f].name }

// patternFields maps pattern letters to fields (y/u year, Q/q quarter, M/L
// month, d day, H hour), with the most letters Java's DateTimeFormatter takes.
var patternFields = map[byte]struct {
	f        field
	maxCount int
}{
	'y': {fieldYear, 19}, 'u': {fieldYear, 19},
	'Q': {fieldQuarter, 5}, 'q': {fieldQuarter, 5},
	'M': {fieldMonth, 5}, 'L': {fieldMonth, 5},
	'd': {fieldDay, 2},
	'H': {fieldHour, 2},
}

// javaLetters are the pattern letters Java's DateTimeFormatter knows; any
// other letter makes the pattern invalid rather than unsupported.
const javaLetters = "GyuQqMLDdFEceaHkKhmsSAnNgBVvzZOXxWwYp"

// unitFields are the fields a format of each unit must contain, in order.
var unitFields = map[TimeUnit][]field{
	Year:    {fieldYear},
	Quarter: {fieldYear, fieldQuarter},
	Month:   {fieldYear, fieldMonth},
	Day:     {fieldYear, fieldMonth, fieldDay},
	Hour:    {fieldYear, fieldMonth, fieldDay, fieldHour},
}

// defaultPatterns are the formats of units without a time-format option.
var defaultPatterns = map[TimeUnit]string{
	Year:    "yyyy",
	Quarter: "yyyyQ",
	Month:   "yyyyMM",
	Day:     "yyyyMMdd",
	Hour:    "yyyyMMddHH",
}

// token is a literal or a field of a format.
type token struct {
	literal string
	f       field
	isField bool
}

// civil is a local date and hour, the only parts a format shows.
type civil struct{ year, month, day, hour int }

// ParseFormat validates pattern as a time format for unit, with Fluss's
// messages.
func ParseFormat(pattern string, unit TimeUnit) (*Format, error) {
	f, err := lex(pattern)
	if err != nil {
		return nil, err
	}
	var got []field
	for _, t := range f.tokens {
		if t.isField {
			got = append(got, t.f)
		}
	}
	if want := unitFields[unit]; !slices.Equal(got, want) {
		return nil, fmt.Errorf("Time format '%s' must contain fields %s in this order for time unit '%s', but found %s.",
			pattern, fieldList(want), unit, fieldList(got))
	}
	// The values must be valid partition names; any time shows whether the
	// literals make them invalid.
	v := f.format(civil{2024, 11, 11, 11})
	if reason := invalidNameReason(v); reason != "" {
		return nil, fmt.Errorf("Time format '%s' generates invalid partition value '%s': %s.", pattern, v, reason)
	}
	return f, nil
}

// DefaultFormat returns the format of unit when no time-format is set.
func DefaultFormat(unit TimeUnit) *Format {
	f, err := ParseFormat(defaultPatterns[unit], unit)
	if err != nil {
		panic(err) // the default patterns are constants
	}
	return f
}

// String returns the pattern.
func (f *Format) String() string { return f.pattern }

// Matches reports whether v is a value of this format, as Java's parser
// decides it: literals exactly, each field its width in digits and in range.
func (f *Format) Matches(v string) bool {
	for _, t := range f.tokens {
		if !t.isField {
			rest, ok := strings.CutPrefix(v, t.literal)
			if !ok {
				return false
			}
			v = rest
			continue
		}
		spec := fieldSpecs[t.f]
		if len(v) < spec.width {
			return false
		}
		n := 0
		for i := 0; i < spec.width; i++ {
			c := v[i]
			if c < '0' || c > '9' {
				return false
			}
			n = n*10 + int(c-'0')
		}
		if n < spec.min || n > spec.max {
			return false
		}
		v = v[spec.width:]
	}
	return v == ""
}

func (f *Format) format(c civil) string {
	var b strings.Builder
	for _, t := range f.tokens {
		if !t.isField {
			b.WriteString(t.literal)
			continue
		}
		switch t.f {
		case fieldYear:
			fmt.Fprintf(&b, "%04d", c.year)
		case fieldQuarter:
			fmt.Fprintf(&b, "%d", (c.month-1)/3+1)
		case fieldMonth:
			fmt.Fprintf(&b, "%02d", c.month)
		case fieldDay:
			fmt.Fprintf(&b, "%02d", c.day)
		case fieldHour:
			fmt.Fprintf(&b, "%02d", c.hour)
		}
	}
	return b.String()
}

// item is one piece of a pattern as DateTimeFormatter.ofPattern splits it:
// a run of one letter, a bracket, or literal text (quoted text, any other
// character, and two single quotes for one).
type item struct {
	letter  byte // the letter of a run, '[' or ']'; 0 for a literal
	count   int
	literal string
	quoted  bool // a literal in quotes, which Java never reads as syntax
}

// lex validates a pattern: first as Java's ofPattern does (so that its
// errors come first, as in Fluss), then by Fluss's rules in pattern order.
func lex(pattern string) (*Format, error) {
	items, ok := split(pattern)
	if !ok || !javaValid(items) {
		return nil, fmt.Errorf("Invalid date-time format pattern '%s'.", pattern)
	}
	f := &Format{pattern: pattern}
	for _, it := range items {
		pf, known := patternFields[it.letter]
		switch {
		case it.letter == 0:
			if n := len(f.tokens); n > 0 && !f.tokens[n-1].isField {
				f.tokens[n-1].literal += it.literal
			} else {
				f.tokens = append(f.tokens, token{literal: it.literal})
			}
		case it.letter == '[' || it.letter == ']':
			return nil, fmt.Errorf("Time format '%s' must not contain optional sections ('[' or ']').", pattern)
		case !known:
			return nil, fmt.Errorf("Time format '%s' contains unsupported time field '%c'.", pattern, it.letter)
		case it.count != fieldSpecs[pf.f].width:
			return nil, fmt.Errorf("Time field '%s' in format '%s' must have fixed width %d, but found %d.",
				pf.f, pattern, fieldSpecs[pf.f].width, it.count)
		default:
			f.tokens = append(f.tokens, token{f: pf.f, isField: true})
		}
	}
	return f, nil
}

// split cuts a pattern into items; false if it ends inside a quote.
func split(pattern string) ([]item, bool) {
	var items []item
	inQuote := false
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'' && i+1 < len(pattern) && pattern[i+1] == '\'':
			items = append(items, item{literal: "'", quoted: true})
			i += 2
		case c == '\'':
			inQuote = !inQuote
			i++
		case inQuote || !(isASCIILetter(c) || c == '[' || c == ']'):
			items = append(items, item{literal: string(c), quoted: inQuote})
			i++
		case c == '[' || c == ']':
			items = append(items, item{letter: c, count: 1})
			i++
		default:
			end := i + 1
			for end < len(pattern) && pattern[end] == c {
				end++
			}
			items = append(items, item{letter: c, count: end - i})
			i = end
		}
	}
	return items, !inQuote
}

// javaValid reports whether DateTimeFormatter.ofPattern accepts the items:
// known letters, not too many of the letters Fluss uses, no reserved
// character, no ']' without its '['.
func javaValid(items []item) bool {
	open := 0
	for _, it := range items {
		switch {
		case it.letter == 0:
			if !it.quoted && strings.Contains("{}#", it.literal) {
				return false
			}
		case it.letter == '[':
			open++
		case it.letter == ']':
			if open == 0 {
				return false
			}
			open--
		case !strings.ContainsRune(javaLetters, rune(it.letter)):
			return false
		default:
			if pf, ok := patternFields[it.letter]; ok && it.count > pf.maxCount {
				return false
			}
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// fieldList prints fields as Java prints a List: [year, month].
func fieldList(fs []field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.String()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// invalidNameReason says why v is not a valid partition value (Fluss's
// TablePath.detectInvalidName and its reserved "__" prefix), or "".
func invalidNameReason(v string) string {
	const maxLen = 200
	switch {
	case v == "":
		return "the empty string is not allowed"
	case len(v) > maxLen:
		return fmt.Sprintf("the length of '%s' is longer than the max allowed length %d", v, maxLen)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Sprintf("'%s' contains one or more characters other than ASCII alphanumerics, '_' and '-'", v)
		}
	}
	if strings.HasPrefix(v, "__") {
		return "'__' is not allowed as prefix, since it is reserved for internal databases/internal tables/internal partitions in Fluss server"
	}
	return ""
}
