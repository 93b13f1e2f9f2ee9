package tiering

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/lake"
)

// currentRows folds the fake log's changes to the table's rows, "k=v".
func currentRows(f *fakeLog) []string {
	state := f.fold()
	var out []string
	for k := range maps.Keys(state) {
		out = append(out, fmt.Sprintf("%d=%s", k, state[k]))
	}
	slices.Sort(out)
	return out
}

// positionReader reads a lake snapshot as a reader that applies position
// deletes and nothing else would (pyiceberg's rule): it refuses any other
// delete, reads the data and delete files with Parquet alone, and returns
// the live rows as sorted "k=v". It also returns the number of live data
// and delete files.
func positionReader(t *testing.T, lt *lake.Table) (rows []string, dataFiles, deleteFiles int) {
	t.Helper()
	ctx := context.Background()
	fsF := func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"fluss", "t"}, lt.MetadataLocation(), fsF, nil)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(iceio.LocalFS{})
	if err != nil {
		t.Fatal(err)
	}
	var data []string
	deleted := map[string]map[int64]bool{}
	for _, m := range manifests {
		for e, err := range m.Entries(iceio.LocalFS{}, true) {
			if err != nil {
				t.Fatal(err)
			}
			df := e.DataFile()
			switch df.ContentType() {
			case iceberg.EntryContentData:
				data = append(data, df.FilePath())
			case iceberg.EntryContentPosDeletes:
				deleteFiles++
				readParquet(t, df.FilePath(), func(cols map[string]any, i int) {
					p, pos := cols["file_path"].(*array.String).Value(i), cols["pos"].(*array.Int64).Value(i)
					if deleted[p] == nil {
						deleted[p] = map[int64]bool{}
					}
					deleted[p][pos] = true
				})
			default:
				t.Fatalf("the lake has a %s file %s: a reader of position deletes cannot read it", df.ContentType(), df.FilePath())
			}
		}
	}
	for _, p := range data {
		pos := int64(0)
		readParquet(t, p, func(cols map[string]any, i int) {
			if !deleted[p][pos] {
				rows = append(rows, fmt.Sprintf("%d=%s", cols["k"].(*array.Int64).Value(i), cols["v"].(*array.String).Value(i)))
			}
			pos++
		})
	}
	slices.Sort(rows)
	return rows, len(data), deleteFiles
}

func readParquet(t *testing.T, path string, fn func(cols map[string]any, i int)) {
	t.Helper()
	pf, err := file.OpenParquetFile(strings.TrimPrefix(path, "file://"), false) // a local lake names its files by URI
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memtest.Allocator(t))
	if err != nil {
		t.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		cols := map[string]any{}
		for j, f := range rec.Schema().Fields() {
			cols[f.Name] = rec.Column(j)
		}
		for i := range int(rec.NumRows()) {
			fn(cols, i)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
}

func withoutOffsets(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[:len(r)-len(r[slices.Index([]byte(r), '@'):])]
	}
	return out
}

// Rounds of updates and deletes retire each key's earlier row by position:
// the lake has position deletes only, a reader that applies nothing else
// reads exactly the table's rows, and so does the lake's own scan. Keys
// changed twice in a round leave only their final row.
func TestPrimaryKeyRoundsRetireByPosition(t *testing.T) {
	lt, f := newLake(t, true)
	for k := range int64(20) {
		f.append(change{1, k, "a"})
	}
	res := round(t, lt, f)
	for r := range 5 {
		for k := int64(r); k < 20; k += 3 {
			v := fmt.Sprintf("r%d", r)
			f.append(change{2, k, "old"}, change{3, k, v + "x"})
			f.append(change{2, k, v + "x"}, change{3, k, v}) // twice in the round
		}
		f.append(change{4, int64(19 - r), ""})
		res = round(t, lt, f)
		got, _, deletes := positionReader(t, lt)
		if want := currentRows(f); !slices.Equal(got, want) {
			t.Fatalf("round %d: a position-delete reader reads\n  %q\nwant the table's rows\n  %q", r, got, want)
		}
		if deletes == 0 {
			t.Fatalf("round %d: no position-delete file", r)
		}
		if lakeView := withoutOffsets(lakeRows(t, lt, f, res.Snapshot)); !slices.Equal(lakeView, currentRows(f)) {
			t.Fatalf("round %d: the lake's scan reads %q, want %q", r, lakeView, currentRows(f))
		}
	}
}
