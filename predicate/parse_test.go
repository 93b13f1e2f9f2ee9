package predicate

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/errs"
)

// testSchema is the schema that the Parse and Bind tests bind to.
var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "user_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "amount", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "data", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ratio", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "fixed", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true},
}, nil)

func nested(depth int) string {
	return strings.Repeat(`{"not": `, depth-1) + `{"eq": ["order_id", 1]}` + strings.Repeat("}", depth-1)
}

func TestParseAndBindErrors(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   []string // substrings of the message
	}{
		// Malformed trees.
		{``, []string{"filter: unexpected end"}},
		{`null`, []string{"filter: expected a predicate object", "null"}},
		{`[]`, []string{"filter: expected a predicate object", "a list"}},
		{`"eq"`, []string{"filter: expected a predicate object", `the string "eq"`}},
		{`{}`, []string{"filter: empty predicate object"}},
		{`{"eq": ["order_id", 1],}`, []string{"filter", "malformed JSON"}},
		{`{"eq": ["order_id", 1]`, []string{"filter: unexpected end"}},
		{`{"eq": ["order_id", 1]} {}`, []string{"filter: unexpected data after"}},
		{`{"eq": ["order_id", 1]}}`, []string{"filter: unexpected data after"}},
		{`{"foo": ["order_id", 1]}`, []string{`filter: unknown operator "foo"`, "starts_with"}},
		{`{"and": [{"EQ": ["order_id", 1]}]}`, []string{`filter.and[0]: unknown operator "EQ"`}},
		{`{"eq": ["order_id", 1], "ne": ["order_id", 2]}`, []string{"filter: more than one key", `"eq" and "ne"`}},
		{`{"eq": ["order_id", 1], "eq": ["order_id", 2]}`, []string{"filter: more than one key"}},
		{`{"and": []}`, []string{"filter.and: empty list"}},
		{`{"or": []}`, []string{"filter.or: empty list"}},
		{`{"or": {"eq": ["order_id", 1]}}`, []string{"filter.or: expected a list of predicates", "an object"}},
		{`{"and": [{"eq": ["order_id", 1]}, 5]}`, []string{"filter.and[1]: expected a predicate object", "the number 5"}},
		{`{"and": [{"eq": ["order_id", 1]}, {"or": [{"gt": ["order_id"]}]}]}`, []string{"filter.and[1].or[0].gt: expected [column, value]", "1 elements"}},
		{`{"not": [{"eq": ["order_id", 1]}]}`, []string{"filter.not: expected a predicate object", "a list"}},
		{`{"not": {}}`, []string{"filter.not: empty predicate object"}},
		{nested(MaxDepth + 1), []string{"predicate nested deeper than 64"}},
		{`{"or": [` + strings.Repeat(`{"is_null": "name"}, `, MaxNodes-1) + `{"is_null": "name"}]}`, []string{"filter.or[4095]: more than 4096 predicates"}},
		{`{"and": [` + nested(MaxDepth) + `]}`, []string{"filter.and[0]" + strings.Repeat(".not", MaxDepth-1) + ": predicate nested deeper than 64"}},

		// Leaves: arity and operand shapes.
		{`{"eq": ["order_id"]}`, []string{"filter.eq: expected [column, value]", "1 elements"}},
		{`{"ne": ["order_id", 1, 2]}`, []string{"filter.ne: expected [column, value]", "3 elements"}},
		{`{"lt": []}`, []string{"filter.lt: expected [column, value]", "0 elements"}},
		{`{"le": "order_id"}`, []string{"filter.le: expected [column, value]", `the string "order_id"`}},
		{`{"gt": [1, 2]}`, []string{"filter.gt: expected [column, value]", "first element must be a column name"}},
		{`{"ge": ["", 2]}`, []string{"filter.ge: empty column name"}},
		{`{"eq": ["order_id", null]}`, []string{"filter.eq: the value is null", "is_null"}},
		{`{"eq": ["order_id", [1]]}`, []string{"filter.eq: the value must be a scalar"}},
		{`{"eq": ["order_id", {"v": 1}]}`, []string{"filter.eq: expected [column, value], got an object"}},
		{`{"eq": ["order_id", [[[1]]]]}`, []string{"filter.eq: lists nested too deeply"}},
		{`{"in": ["order_id", []]}`, []string{"filter.in: empty value list"}},
		{`{"in": ["order_id", 1]}`, []string{"filter.in: expected [column, [value, ...]]", "must be a list"}},
		{`{"in": ["order_id"]}`, []string{"filter.in: expected [column, [value, ...]]", "1 elements"}},
		{`{"not_in": ["order_id", [1, null]]}`, []string{"filter.not_in: value 1 of the list is null"}},
		{`{"not_in": ["order_id", [1, [2]]]}`, []string{"filter.not_in: value 1 of the list is a list"}},
		{`{"is_null": ["order_id"]}`, []string{"filter.is_null: expected a column name", "a list of 1"}},
		{`{"is_not_null": 3}`, []string{"filter.is_not_null: expected a column name", "the number 3"}},
		{`{"is_null": ""}`, []string{"filter.is_null: empty column name"}},
		{`{"starts_with": ["name", 1]}`, []string{"filter.starts_with: the prefix must be a string", "the number 1"}},
		{`{"starts_with": ["name"]}`, []string{`filter.starts_with: expected [column, "prefix"]`}},

		// Binding.
		{`{"and": [{"eq": ["order_id", 1]}, {"gt": ["nope", 1]}]}`, []string{`filter.and[1].gt: unknown column "nope" (columns: order_id, user_id, amount, `}},
		{`{"is_null": "Order_ID"}`, []string{`filter.is_null: unknown column "Order_ID"`}},
		{`{"gt": ["amount", "100.001"]}`, []string{`filter.gt: column "amount"`, `"100.001"`, "decimal"}},
		{`{"gt": ["amount", "1e9"]}`, []string{`filter.gt: column "amount"`, "digits"}},
		{`{"eq": ["order_id", "abc"]}`, []string{`filter.eq: column "order_id"`, `"abc"`}},
		{`{"eq": ["order_id", 1.5]}`, []string{`filter.eq: column "order_id"`, "not an integer"}},
		{`{"eq": ["order_id", 9223372036854775808]}`, []string{`filter.eq: column "order_id"`, "out of range"}},
		{`{"or": [{"eq": ["user_id", 1]}, {"in": ["user_id", [1, 2, "x"]]}]}`, []string{`filter.or[1].in: column "user_id": value 2 of the list`, `"x"`}},
		{`{"not": {"eq": ["flag", 1]}}`, []string{`filter.not.eq: column "flag"`, "true or false"}},
		{`{"ge": ["ts", "2026-13-01T00:00:00"]}`, []string{`filter.ge: column "ts"`, "timestamp"}},
		{`{"ge": ["ts", "2026-11-30T12:00:00Z"]}`, []string{`filter.ge: column "ts"`, "zone"}},
		{`{"lt": ["day", 20000]}`, []string{`filter.lt: column "day"`, "date"}},
		{`{"lt": ["ratio", "0.5"]}`, []string{`filter.lt: column "ratio"`, "number"}},
		{`{"lt": ["ratio", 1e400]}`, []string{`filter.lt: column "ratio"`, "out of range"}},
		{`{"eq": ["name", 5]}`, []string{`filter.eq: column "name"`, "string"}},
		{`{"starts_with": ["order_id", "1"]}`, []string{`filter.starts_with: starts_with needs a STRING column; "order_id" is int64`}},
		{`{"starts_with": ["data", "1"]}`, []string{`filter.starts_with: starts_with needs a STRING column; "data"`}},
		{`{"lt": ["tags", "x"]}`, []string{`filter.lt: column "tags" of type list`, "cannot be compared"}},
		{`{"in": ["tags", ["x"]]}`, []string{`filter.in: column "tags"`, "cannot be compared"}},
		{`{"eq": ["fixed", "ab"]}`, []string{`filter.eq: column "fixed" of type fixed_size_binary[2] cannot be compared`}},
		{`{"eq": ["data", {"hex": "ff"}]}`, []string{"filter.eq: expected [column, value]", `{"base64": "..."}`}},
		{`{"eq": ["data", {"base64": "f"}]}`, []string{"filter.eq: base64: illegal base64 data"}},
		{`{"eq": ["data", {"base64": 5}]}`, []string{"filter.eq: base64: expected a string, got the number 5"}},
		{`{"eq": ["data", {"base64": "/w==", "x": 1}]}`, []string{"filter.eq: expected [column, value]"}},
		{`{"eq": ["name", {"base64": "/w=="}]}`, []string{`filter.eq: column "name"`, "expected a string"}},
		{`{"lt": ["ratio", "nan"]}`, []string{`filter.lt: column "ratio"`, `"NaN"`}},
	} {
		e, err := Parse([]byte(tc.filter))
		if err == nil {
			_, err = Bind(e, testSchema)
		}
		if len(tc.filter) > 200 {
			tc.filter = tc.filter[:200] + "..."
		}
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.filter, tc.want)
			continue
		}
		if k := errs.KindOf(err); k != errs.InvalidArgument {
			t.Errorf("%s: kind %v, want invalid argument (%v)", tc.filter, k, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tc.filter, err, w)
			}
		}
	}
}

func TestBindValid(t *testing.T) {
	for _, tc := range []struct {
		filter string
		str    string
		cols   []int
	}{
		{`{"and": [{"gt": ["amount", "100.00"]}, {"in": ["user_id", [1, 2, 3]]}]}`,
			`(amount > 100.00 AND user_id IN (1, 2, 3))`, []int{1, 2}},
		{nested(MaxDepth), strings.Repeat("NOT ", MaxDepth-1) + "order_id = 1", []int{0}},
		{`{"or": [{"is_null": "tags"}, {"not": {"is_not_null": "name"}}, {"starts_with": ["name", "ab\"c"]}]}`,
			`(tags IS NULL OR NOT name IS NOT NULL OR starts_with(name, "ab\"c"))`, []int{4, 6}},
		{`{"and": [{"ge": ["ts", "2026-11-30T12:00:00.123"]}, {"lt": ["ts", 1764504000123]}, {"not_in": ["day", ["2026-11-30"]]}]}`,
			`(ts >= TIMESTAMP '2026-11-30 12:00:00.123' AND ts < TIMESTAMP '2025-11-30 12:00:00.123' AND day NOT IN (DATE '2026-11-30'))`, []int{3, 8}},
		{`{"and": [{"eq": ["data", "xy"]}, {"ne": ["flag", true]}, {"le": ["ratio", 0.5]}, {"lt": ["ratio", -3]}]}`,
			`(data = x'7879' AND flag <> true AND ratio <= 0.5 AND ratio < -3)`, []int{5, 7, 9}},
		{`  {"eq" : ["order_id", 3e0]} `, `order_id = 3`, []int{0}},
		{`{"or": [{"gt": ["data", {"base64": "/wA="}]}, {"in": ["data", [{"base64": ""}, "a"]]}]}`,
			`(data > x'ff00' OR data IN (x'', x'61'))`, []int{5}},
		{`{"or": [{"eq": ["ratio", "NaN"]}, {"lt": ["ratio", "-Infinity"]}, {"gt": ["ratio", "Infinity"]}]}`,
			`(ratio = 'NaN' OR ratio < '-Inf' OR ratio > '+Inf')`, []int{9}},
		{`{"or": [` + strings.Repeat(`{"is_null": "name"}, `, MaxNodes-2) + `{"is_null": "day"}]}`,
			"(" + strings.Repeat("name IS NULL OR ", MaxNodes-2) + "day IS NULL)", []int{4, 8}},
	} {
		e, err := Parse([]byte(tc.filter))
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		b, err := Bind(e, testSchema)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if got := b.String(); got != tc.str {
			t.Errorf("%s: String() = %s, want %s", tc.filter, got, tc.str)
		}
		if got := b.Columns(); !slices.Equal(got, tc.cols) {
			t.Errorf("%s: Columns() = %v, want %v", tc.filter, got, tc.cols)
		}
	}
}
