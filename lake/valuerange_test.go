package lake

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// CheckRange finds the first timestamp whose microseconds leave 64 bits,
// at the exact bounds, skipping NULLs and finer units, also inside lists,
// maps and structs, naming the column and the top-level row.
func TestCheckRange(t *testing.T) {
	mem := checkedAllocator(t)
	ms := &arrow.TimestampType{Unit: arrow.Millisecond}
	sec := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}
	us := &arrow.TimestampType{Unit: arrow.Microsecond}
	const maxMs, minMs = math.MaxInt64 / 1000, math.MinInt64 / 1000
	const maxS, minS = math.MaxInt64 / 1_000_000, math.MinInt64 / 1_000_000
	for _, tc := range []struct {
		name   string
		typ    arrow.DataType
		json   string
		col    string
		row    int
		holds  bool
		values string
	}{
		{name: "ms bounds", typ: ms, json: `[0, ` + itoa(maxMs) + `, ` + itoa(minMs) + `, null]`, holds: true},
		{name: "ms above", typ: ms, json: `[0, null, ` + itoa(maxMs+1) + `]`, row: 2, values: itoa(maxMs+1) + "ms"},
		{name: "ms below", typ: ms, json: `[` + itoa(minMs-1) + `]`, row: 0, values: itoa(minMs-1) + "ms"},
		{name: "s bounds", typ: sec, json: `[` + itoa(maxS) + `, ` + itoa(minS) + `]`, holds: true},
		{name: "s above", typ: sec, json: `[1, ` + itoa(maxS+1) + `]`, row: 1, values: itoa(maxS+1) + "s"},
		{name: "us any", typ: us, json: `[` + itoa(math.MaxInt64) + `, ` + itoa(math.MinInt64) + `]`, holds: true},
		{name: "list", typ: arrow.ListOf(ms), json: `[[1], null, [2, 3], [4, ` + itoa(math.MaxInt64) + `]]`, row: 3, values: itoa(math.MaxInt64) + "ms"},
		{name: "map", typ: arrow.MapOf(arrow.BinaryTypes.String, ms), json: `[[{"key": "a", "value": 1}], [{"key": "b", "value": ` + itoa(math.MinInt64) + `}]]`, row: 1, values: itoa(math.MinInt64) + "ms"},
		{name: "struct", typ: arrow.StructOf(arrow.Field{Name: "at", Type: ms, Nullable: true}), json: `[{"at": 1}, {"at": ` + itoa(maxMs+1) + `}]`, row: 1, values: itoa(maxMs+1) + "ms"},
	} {
		arr, _, err := array.FromJSON(mem, tc.typ, strings.NewReader(tc.json))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		id := arrow.PrimitiveTypes.Int64
		ids, _, _ := array.FromJSON(mem, id, strings.NewReader(`[`+strings.Repeat("0,", arr.Len()-1)+`0]`))
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "id", Type: id}, {Name: "ts", Type: tc.typ, Nullable: true}}, nil),
			[]arrow.Array{ids, arr}, int64(arr.Len()))
		err = CheckRange(rec)
		var re *RangeError
		switch {
		case tc.holds && err != nil:
			t.Errorf("%s: %v, want none", tc.name, err)
		case !tc.holds && (!errors.As(err, &re) || re.Column != "ts" || re.Row != tc.row || re.Value != tc.values):
			t.Errorf("%s: %v, want column ts row %d value %s", tc.name, err, tc.row, tc.values)
		}
		rec.Release()
		arr.Release()
		ids.Release()
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
