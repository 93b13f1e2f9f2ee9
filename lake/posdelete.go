package lake

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Position deletes (Iceberg v2): a primary-key table retires a key's earlier
// row by naming its data file and position, which every Iceberg reader
// applies (pyiceberg, and the planners built on it, refuse equality
// deletes).

// The reserved field ids of a position-delete file's columns.
const (
	posDeleteFilePathID = 2147483546
	posDeletePosID      = 2147483545
)

var posDeleteSchema = arrow.NewSchema([]arrow.Field{
	{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(posDeleteFilePathID)})},
	{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(posDeletePosID)})},
}, nil)

// posDelete retires the row at pos of a data file.
type posDelete struct {
	file iceberg.DataFile
	pos  int64
}

// writePosDeletes writes the position-delete files that retire dels: one
// per partition, sorted by file path and position as the spec requires.
func writePosDeletes(ctx context.Context, tbl *table.Table, dels []posDelete) ([]iceberg.DataFile, error) {
	if len(dels) == 0 {
		return nil, nil
	}
	byPartition := map[string][]posDelete{}
	for _, d := range dels {
		k := partitionKey(d.file)
		byPartition[k] = append(byPartition[k], d)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("the lake's file system cannot write files")
	}
	locations, err := tbl.LocationProvider()
	if err != nil {
		return nil, err
	}
	var out []iceberg.DataFile
	for _, k := range slices.Sorted(maps.Keys(byPartition)) {
		part := byPartition[k]
		slices.SortFunc(part, func(a, b posDelete) int {
			return cmp.Or(cmp.Compare(a.file.FilePath(), b.file.FilePath()), cmp.Compare(a.pos, b.pos))
		})
		df, err := writePosDeleteFile(wfs, tbl, locations.NewDataLocation(newFileName("deletes")), part)
		if err != nil {
			return nil, err
		}
		out = append(out, df)
	}
	return out, nil
}

// writePosDeleteFile writes the sorted dels of one partition as one file.
func writePosDeleteFile(fs iceio.WriteFileIO, tbl *table.Table, path string, locs []posDelete) (iceberg.DataFile, error) {
	mem := memory.DefaultAllocator
	pb, ob := array.NewStringBuilder(mem), array.NewInt64Builder(mem)
	defer pb.Release()
	defer ob.Release()
	for _, l := range locs {
		pb.Append(l.file.FilePath())
		ob.Append(l.pos)
	}
	paths, positions := pb.NewArray(), ob.NewArray()
	rec := array.NewRecordBatch(posDeleteSchema, []arrow.Array{paths, positions}, int64(len(locs)))
	paths.Release()
	positions.Release()
	defer rec.Release()

	f, err := fs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create position-delete file: %w", err)
	}
	counted := &countingWriter{w: f}
	w, err := pqarrow.NewFileWriter(posDeleteSchema, counted,
		parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)), pqarrow.DefaultWriterProps())
	if err == nil {
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr // closes f
		}
	} else {
		f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("write position-delete file %s: %w", path, err)
	}
	first, last := locs[0], locs[len(locs)-1]
	data := first.file
	spec := tbl.Metadata().PartitionSpecByID(int(data.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("data file %s has partition spec %d, which the lake table lacks", data.FilePath(), data.SpecID())
	}
	b, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentPosDeletes, path, iceberg.ParquetFile,
		data.Partition(), logicalTypes(*spec, tbl.Schema()), nil, int64(len(locs)), counted.n)
	if err != nil {
		return nil, err
	}
	// Bounds on file_path let readers match the file to the data files it
	// may touch without opening it.
	b.LowerBoundValues(map[int][]byte{posDeleteFilePathID: []byte(first.file.FilePath())}).
		UpperBoundValues(map[int][]byte{posDeleteFilePathID: []byte(last.file.FilePath())})
	return b.Build(), nil
}

// partitionKey identifies a data file's partition.
func partitionKey(df iceberg.DataFile) string {
	return fmt.Sprint(df.SpecID(), df.Partition())
}

func newFileName(kind string) string {
	var b [16]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%s.parquet", kind, hex.EncodeToString(b[:]))
}

type countingWriter struct {
	w interface {
		Write([]byte) (int, error)
		Close() error
	}
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Close() error { return c.w.Close() }
