package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fluxgate-io/fluxgate/client"
)

// TestInputErrorsSayWhere checks that a value or row that cannot be read
// is named by file and line, column, value and the column's SQL type, in
// whichever batch it falls.
func TestInputErrorsSayWhere(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	spec := testSpec()
	types := sqlTypes(&client.TableInfo{TableSpec: spec})
	for _, tc := range []struct {
		file, in, want string
	}{
		{"orders.csv", "id,amount\n1,1.50\n2,abc\n", `orders.csv:3: column amount: "abc" is not a DECIMAL(10,2)`},
		{"orders.csv", "id,name\n1,a\nabc,b\n", `orders.csv:3: column id: "abc" is not a BIGINT`},
		{"orders.csv", "id,ok\n1,true\n2,maybe\n", `orders.csv:3: column ok: "maybe" is not a BOOLEAN`},
		{"orders.csv", "id,tm\n1,12:00:00\n2,noon\n", `orders.csv:3: column tm: "noon" is not a TIME(3)`},
		{"orders.csv", "id,ltz\n1,2026-11-30T12:00:00\n", `orders.csv:2: column ltz: "2026-11-30T12:00:00" is not a TIMESTAMP_LTZ(3) (an ISO-8601 time with a zone, Z or +hh:mm, or an integer)`},
		{"orders.csv", "id,name\n1,a\n2\n", "orders.csv:3: 1 field, want 2 (id,name)"},
		{"orders.csv", "id,name\n1,a\n2,b,c\n", "orders.csv:3: 3 fields, want 2 (id,name)"},
		{"orders.csv", "id,name\n1,\"a\nb\"\n2,c\nx,d\n", `orders.csv:5: column id: "x" is not a BIGINT`},
		{"orders.csv", "id,name\r\n1,a\r\n\r\nx,b", `orders.csv:4: column id: "x" is not a BIGINT`},
		{"orders.csv", "id,name\n1,a\"b\n2,c\n", `orders.csv:2: bare " in non-quoted-field`},
		{"orders.jsonl", "{\"id\": 1}\n\n{\"id\": \"abc\"}\n", `orders.jsonl:3: column id: "abc" is not a BIGINT`},
		{"orders.jsonl", "{\"id\": 1, \"tags\": 5}\n", `orders.jsonl:1: column tags: 5 is not an ARRAY<STRING>`},
		{"orders.jsonl", "{\"id\": 1}\n{\"id\": 2\n", "orders.jsonl:2: invalid JSON: unexpected end of JSON input"},
		{"orders.jsonl", "{\"id\": 1}\n[1, 2]\n", "orders.jsonl:2: want a JSON object, found [1, 2]"},
		{"orders.jsonl", "\n{\"id\": 1, \"nope\": 3}\n{\"id\": 2}\n", `orders.jsonl:2: keys ["nope"] are not table columns (columns: id, name, amount, ts, ltz, d, tm, ok, tags, attrs)`},
		{"orders.json", "[{\"id\": 1},\n {\"id\": true}]", "orders.json: element 2: column id: true is not a BIGINT"},
	} {
		path := writeTemp(t, tc.file, tc.in)
		format, err := detectFormat(path, "")
		if err != nil {
			t.Fatal(err)
		}
		// One row a batch and all rows in one: the bad row is found either way.
		for _, batchRows := range []int{1, 100} {
			in, err := openInput(context.Background(), path, nil, testTable(t), inputOptions{format: format, batchRows: batchRows, mem: mem, sqlTypes: types})
			if err != nil {
				t.Fatal(err)
			}
			for in.Next() {
			}
			err = in.Err()
			in.Release()
			if want := filepath.Join(filepath.Dir(path), tc.want); err == nil || err.Error() != want {
				t.Errorf("%q, %d rows a batch: %v\nwant %s", tc.in, batchRows, err, want)
			}
		}
	}
	// Parquet and Arrow batches have no lines; their errors name the file.
	rec, _, err := array.RecordFromJSON(mem, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil), strings.NewReader(`[{"id": "x"}]`))
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	w := ipc.NewWriter(&stream, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "ids.arrows", stream.String())
	in, err := openInput(context.Background(), path, nil, testTable(t), inputOptions{format: "arrow", mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	for in.Next() {
	}
	if err := in.Err(); err == nil || !strings.HasPrefix(err.Error(), path+": column id: cannot convert utf8 to int64") {
		t.Errorf("arrow input with a bad value: %v, want an error naming %s", err, path)
	}
	in.Release()

	if got := typeWithHint(inputOptions{}, testTable(t).Field(0)); !strings.HasPrefix(got, "an int64") {
		t.Errorf("a column without an SQL type is named %q, want its Arrow type", got)
	}
}
