package engine

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// floatPartitionRows reads a FLOAT- or DOUBLE-partitioned table's rows as
// "id partition bits" lines, sorted: the partition its batch came from and
// the bits of its p value, so that 0 and −0 and NaN are told apart.
func floatPartitionRows(t *testing.T, e *Engine, table string) []string {
	t.Helper()
	plan, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			t.Fatal(err)
		}
		err = rs.Run(t.Context(), func(rec arrow.RecordBatch, m protocol.BatchMeta) error {
			ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
			p := rec.Column(rec.Schema().FieldIndices("p")[0])
			for i := range ids.Len() {
				var bits uint64
				switch p := p.(type) {
				case *array.Float32:
					bits = uint64(math.Float32bits(p.Value(i)))
				case *array.Float64:
					bits = math.Float64bits(p.Value(i))
				}
				out = append(out, fmt.Sprintf("%d %s %x", ids.Value(i), m.Partition, bits))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

// A lake table partitioned by a FLOAT or DOUBLE column reads the same rows
// before and after tiering, through the union read and $lake: 0 and −0 are
// two partitions, NaN one, and each reads only its own rows from the lake.
func TestFloatPartitionsTierExactly(t *testing.T) {
	nan32, nan64 := float32(math.NaN()), math.NaN()
	for _, tc := range []struct {
		typ    string
		values []float64 // as float64; FLOAT's are converted
	}{
		{"FLOAT", []float64{0, math.Copysign(0, -1), float64(nan32), math.Inf(1), math.Inf(-1),
			float64(math.SmallestNonzeroFloat32), -float64(math.SmallestNonzeroFloat32), float64(float32(1e-40)), 1.5}},
		{"DOUBLE", []float64{0, math.Copysign(0, -1), nan64, math.Inf(1), math.Inf(-1),
			math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 2.5e-310, 1e300}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			e := openPartitioned(t, t.TempDir(), Options{})
			defer e.Close()
			spec := protocol.TableSpec{Table: "m",
				Columns:       []protocol.Column{{Name: "id", Type: "BIGINT"}, {Name: "p", Type: tc.typ}},
				PartitionKeys: []string{"p"},
				Options:       map[string]string{"bucket.num": "2", "bucket.key": "id", "table.datalake.enabled": "true"},
			}
			if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
				t.Fatal(err)
			}
			pt := arrow.PrimitiveTypes.Float64
			if tc.typ == "FLOAT" {
				pt = arrow.PrimitiveTypes.Float32
			}
			schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
				{Name: "p", Type: pt, Nullable: true}}, nil)
			b := array.NewRecordBuilder(memtest.Allocator(t), schema)
			for i, v := range tc.values {
				b.Field(0).(*array.Int64Builder).Append(int64(i))
				if pb, ok := b.Field(1).(*array.Float32Builder); ok {
					pb.Append(float32(v))
				} else {
					b.Field(1).(*array.Float64Builder).Append(v)
				}
			}
			rec := b.NewRecordBatch()
			b.Release()
			if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "m"}, rec); err != nil {
				t.Fatal(err)
			}
			want := floatPartitionRows(t, e, "m")
			if len(want) != len(tc.values) {
				t.Fatalf("before tiering: %d rows %v, want %d", len(want), want, len(tc.values))
			}
			if _, err := e.TierNow(t.Context(), "m"); err != nil {
				t.Fatal(err)
			}
			for _, table := range []string{"m", "m$lake"} {
				if got := floatPartitionRows(t, e, table); !reflect.DeepEqual(got, want) {
					t.Errorf("%s after tiering reads\n%v\nwant\n%v", table, got, want)
				}
			}
		})
	}
}
