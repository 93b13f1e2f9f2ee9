package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

func outputRecord(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "ltz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "raw", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(`[
		{"id": 1, "name": "alice", "amount": "12.50", "ts": "2026-11-30T12:00:00.123", "ltz": "2026-11-30T12:00:00.5Z", "raw": "AAE="},
		{"id": 22, "name": "line\nbreak, \"quoted\"", "amount": null, "ts": null, "ltz": null, "raw": null},
		{"id": 3, "name": "", "amount": "-0.01", "ts": 0, "ltz": 0, "raw": ""}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func renderOutput(t *testing.T, format string, recs ...arrow.RecordBatch) string {
	t.Helper()
	var out bytes.Buffer
	w, err := newRecordWriter(format, &out, recs[0].Schema(), memtest.Allocator(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestOutputFormats(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := outputRecord(t, mem)
	defer rec.Release()
	first, rest := rec.NewSlice(0, 1), rec.NewSlice(1, 3)
	defer first.Release()
	defer rest.Release()

	for _, tc := range []struct{ format, want string }{
		{"table", `id  name                   amount  ts                       ltz                     raw
--  ---------------------  ------  -----------------------  ----------------------  ----
1   alice                  12.50   2026-11-30 12:00:00.123  2026-11-30 12:00:00.5Z  AAE=
22  line\nbreak, "quoted"  NULL    NULL                     NULL                    NULL
3                          -0.01   1970-01-01 00:00:00      1970-01-01 00:00:00Z
(3 rows)
`},
		{"csv", `id,name,amount,ts,ltz,raw
1,alice,12.50,2026-11-30 12:00:00.123,2026-11-30 12:00:00.5Z,AAE=
22,"line
break, ""quoted""",,,,
3,,-0.01,1970-01-01 00:00:00,1970-01-01 00:00:00Z,
`},
		{"jsonl", `{"id":1,"name":"alice","amount":"12.50","ts":"2026-11-30T12:00:00.123","ltz":"2026-11-30T12:00:00.5Z","raw":"AAE="}
{"id":22,"name":"line\nbreak, \"quoted\"","amount":null,"ts":null,"ltz":null,"raw":null}
{"id":3,"name":"","amount":"-0.01","ts":"1970-01-01T00:00:00","ltz":"1970-01-01T00:00:00Z","raw":""}
`},
	} {
		if got := renderOutput(t, tc.format, first, rest); got != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.format, got, tc.want)
		}
	}

	// Arrow: an IPC stream that reads back as the same rows.
	got := renderOutput(t, "arrow", first, rest)
	r, err := ipc.NewReader(strings.NewReader(got), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for r.Next() {
		n += r.RecordBatch().NumRows()
	}
	if r.Err() != nil || n != 3 || !r.Schema().Equal(rec.Schema()) {
		t.Errorf("arrow output: %d rows, %v, schema %s", n, r.Err(), r.Schema())
	}
	r.Release()

	// A batch whose only BYTES value is empty may carry no data buffer at all
	// (as IPC reads it); the value is still "", as beside non-empty values.
	empty := emptyBinaryRecord()
	defer empty.Release()
	if got, want := renderOutput(t, "jsonl", empty), "{\"raw\":\"\",\"big\":\"\"}\n"; got != want {
		t.Errorf("jsonl of empty BYTES: %s want: %s", got, want)
	}

	if _, err := newRecordWriter("xml", &bytes.Buffer{}, rec.Schema(), mem); err == nil {
		t.Error("unknown format accepted")
	}
	if checkOutputFormat("xml") == nil || checkOutputFormat("jsonl") != nil {
		t.Error("checkOutputFormat")
	}
}

// emptyBinaryRecord is one row of an empty BINARY and an empty LARGE_BINARY
// value, with offsets and no data buffers.
func emptyBinaryRecord() arrow.RecordBatch {
	offsets32 := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 0}))
	offsets64 := memory.NewBufferBytes(arrow.Int64Traits.CastToBytes([]int64{0, 0}))
	raw := array.NewBinaryData(array.NewData(arrow.BinaryTypes.Binary, 1, []*memory.Buffer{nil, offsets32, nil}, nil, 0, 0))
	big := array.NewLargeBinaryData(array.NewData(arrow.BinaryTypes.LargeBinary, 1, []*memory.Buffer{nil, offsets64, nil}, nil, 0, 0))
	defer raw.Release()
	defer big.Release()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "raw", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "big", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
	}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{raw, big}, 1)
}

// TestTableFollow checks that a followed scan prints each batch when it is
// flushed, with the columns sized by the first batch and widened later.
func TestTableFollow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := outputRecord(t, mem)
	defer rec.Release()
	sc := arrow.NewSchema(rec.Schema().Fields()[:2], nil)
	narrow := array.NewRecordBatch(sc, rec.Columns()[:2], rec.NumRows())
	defer narrow.Release()
	first, second := narrow.NewSlice(0, 1), narrow.NewSlice(2, 3)
	defer first.Release()
	defer second.Release()

	var out bytes.Buffer
	w, err := newRecordWriter("table", &out, sc, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil || out.Len() != 0 {
		t.Errorf("flush before any row printed %q", out.String())
	}
	w.Write(first)
	w.Flush()
	if want := "id  name\n--  -----\n1   alice\n"; out.String() != want {
		t.Errorf("after the first batch:\n%q\nwant\n%q", out.String(), want)
	}
	w.Write(second)
	w.Flush()
	w.Close()
	if want := "id  name\n--  -----\n1   alice\n3\n(2 rows)\n"; out.String() != want {
		t.Errorf("at the end:\n%q\nwant\n%q", out.String(), want)
	}

	// An empty result still shows its columns.
	out.Reset()
	w, _ = newRecordWriter("table", &out, sc, mem)
	w.Close()
	if want := "id  name\n--  ----\n(0 rows)\n"; out.String() != want {
		t.Errorf("empty: %q", out.String())
	}
}
