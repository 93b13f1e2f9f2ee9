package protocol

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestVectorBatches reads every Arrow IPC vector: its schema is the wire
// schema of its table (TableSpec.ArrowSchema), or the columns it names with
// a lookup answer's _key_index; its row count is the index's; and a
// compressed file holds the same rows as its uncompressed twin.
func TestVectorBatches(t *testing.T) {
	idx := readIndex(t)
	specs := map[string]*TableSpec{}
	for _, v := range idx.Vectors {
		if v.Type == "TableSpec" {
			spec, err := decodeVector(v.Type, readVector(t, v.File))
			if err != nil {
				t.Fatal(err)
			}
			specs[v.Name] = spec.(*TableSpec)
		}
	}
	byFile := map[string][]arrow.RecordBatch{}
	for _, v := range idx.Vectors {
		if v.Compare != "rows" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			spec := specs[v.Table]
			if spec == nil {
				t.Fatalf("table %q is no TableSpec vector", v.Table)
			}
			want, err := spec.ArrowSchema()
			if err != nil {
				t.Fatal(err)
			}
			if v.Columns != nil {
				want = project(t, want, v.Columns)
			}
			got, recs := readBatches(t, v.File)
			byFile[v.Name] = recs
			if !got.Equal(want) {
				t.Errorf("schema\n got: %s\nwant: %s", got, want)
			}
			var rows int64
			for _, r := range recs {
				rows += r.NumRows()
			}
			if rows != v.Rows {
				t.Errorf("%d rows, want %d", rows, v.Rows)
			}
		})
	}
	plain, zstd := byFile["batch-all-types"], byFile["batch-all-types-zstd"]
	if len(plain) == 0 || len(plain) != len(zstd) {
		t.Fatalf("all-types: %d batches, zstd: %d", len(plain), len(zstd))
	}
	for i := range plain {
		if !array.RecordEqual(plain[i], zstd[i]) {
			t.Errorf("batch %d: the ZSTD file's rows differ from the uncompressed file's", i)
		}
	}
}

// project returns the named columns of schema; _key_index is a lookup
// answer's INT32 key index.
func project(t *testing.T, schema *arrow.Schema, names []string) *arrow.Schema {
	t.Helper()
	fields := make([]arrow.Field, len(names))
	for i, name := range names {
		if name == KeyIndexColumn {
			fields[i] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32}
			continue
		}
		j := schema.FieldIndices(name)
		if len(j) != 1 {
			t.Fatalf("column %q is not in %s", name, schema)
		}
		fields[i] = schema.Field(j[0])
	}
	return arrow.NewSchema(fields, nil)
}

func readBatches(t *testing.T, file string) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	r, err := ipc.NewFileReader(bytes.NewReader(readVector(t, file)), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		t.Cleanup(rec.Release)
		recs = append(recs, rec)
	}
	return r.Schema(), recs
}
