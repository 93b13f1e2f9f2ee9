package conformance_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

// The file-limit test's shape: the server's RLIMIT_NOFILE, and the
// partitions, buckets and rows per partition of its table: 8000 buckets of
// two files each, many times the limit.
const (
	filesLimit     = 1024
	filesParts     = 1000
	filesBuckets   = 8
	filesPartRows  = 16
	filesLogBudget = filesLimit / 4 // the log's share of the default --open-files (half the limit)
)

// TestManyBucketsUnderFileLimit: a server limited to 1024 descriptors takes
// one write into 1000 partitions of 8 buckets each, then still creates a
// table and a partition, writes them and reads everything back, before and
// after a restart; its log segment files open at once stay within the log's
// share of --open-files.
func TestManyBucketsUnderFileLimit(t *testing.T) {
	srv := startServerMaxFiles(t, filesLimit, "--max-partitions", strconv.Itoa(filesParts+2))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := testContext(t, 3*time.Minute)
	c, err := client.Dial(ctx, srv.addr, client.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()

	parted := "fluss.files_parted"
	spec := client.TableSpec{
		Table: parted,
		Columns: []client.Column{
			{Name: "id", Type: "BIGINT", Nullable: new(false)},
			{Name: "dt", Type: "STRING", Nullable: new(false)},
		},
		PartitionKeys: []string{"dt"},
		Options:       map[string]string{"bucket.num": strconv.Itoa(filesBuckets), "bucket.key": "id"},
	}
	if _, err := c.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	want := filesWrite(ctx, t, c, mem, parted, 0, filesParts)
	t.Logf("one write into %d partitions of %d buckets: %s; server holds %d log files open", filesParts, filesBuckets, time.Since(start).Round(time.Millisecond), openLogFiles(t, srv))

	// Then a new table and a new partition, before and after a restart.
	for round := range 2 {
		start = time.Now()
		if round == 1 {
			if err := srv.restart(); err != nil {
				t.Fatal(err)
			}
			t.Logf("restart: %s", time.Since(start).Round(time.Millisecond))
			c.Close()
			if c, err = client.Dial(ctx, srv.addr, client.WithAllocator(mem)); err != nil {
				t.Fatal(err)
			}
		}
		plain := fmt.Sprintf("fluss.files_plain_%d", round)
		plainSpec := client.TableSpec{Table: plain, Columns: spec.Columns, Options: spec.Options}
		if _, err := c.CreateTable(ctx, plainSpec, false); err != nil {
			t.Fatalf("round %d: create table: %v", round, err)
		}
		plainWant := filesWrite(ctx, t, c, mem, plain, 0, 1)
		part := filesParts + round
		if _, err := c.CreatePartition(ctx, parted, client.PartitionSpec{"dt": filesPartName(part)}, false); err != nil {
			t.Fatalf("round %d: create partition: %v", round, err)
		}
		want = append(want, filesWrite(ctx, t, c, mem, parted, part, part+1)...)
		filesCheck(ctx, t, c, plain, plainWant)
		readStart := time.Now()
		filesCheck(ctx, t, c, parted, want)
		n := openLogFiles(t, srv)
		t.Logf("round %d: a table and a partition created and written, everything read back (the partitioned table in %s): %s; server holds %d log files open",
			round, time.Since(readStart).Round(time.Millisecond), time.Since(start).Round(time.Millisecond), n)
		if n > filesLogBudget {
			t.Errorf("round %d: the server holds %d log segment files open, over the log's share %d of --open-files", round, n, filesLogBudget)
		}
	}
}

func filesPartName(p int) string { return fmt.Sprintf("p%04d", p) }

var filesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "dt", Type: arrow.BinaryTypes.String},
}, nil)

// filesWrite writes filesPartRows rows into each partition of [from, to) as
// one batch and returns their ids (partition p's are p*filesPartRows on).
func filesWrite(ctx context.Context, t *testing.T, c *client.Client, mem memory.Allocator, table string, from, to int) []int64 {
	t.Helper()
	rb := array.NewRecordBuilder(mem, filesSchema)
	defer rb.Release()
	var ids []int64
	for p := from; p < to; p++ {
		for r := range filesPartRows {
			id := int64(p*filesPartRows + r)
			ids = append(ids, id)
			rb.Field(0).(*array.Int64Builder).Append(id)
			rb.Field(1).(*array.StringBuilder).Append(filesPartName(p))
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	w, err := c.NewWriter(ctx, client.WriteRequest{Table: table})
	if err != nil {
		t.Fatalf("write %s: %v", table, err)
	}
	if _, err := w.Write(rec); err != nil {
		w.Close()
		t.Fatalf("write %s: %v", table, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("write %s: %v", table, err)
	}
	return ids
}

// filesCheck reads a table whole and compares its ids with want.
func filesCheck(ctx context.Context, t *testing.T, c *client.Client, table string, want []int64) {
	t.Helper()
	s, err := c.Scan(ctx, client.ScanRequest{Table: table, Columns: []string{"id"}}, client.WithConcurrency(8))
	if err != nil {
		t.Fatalf("scan %s: %v", table, err)
	}
	defer s.Release()
	var got []int64
	for s.Next() {
		got = append(got, s.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("scan %s: %v", table, err)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("scan %s: %d ids, want the %d written", table, len(got), len(want))
	}
}

// openLogFiles counts the log segment and index files the server has open.
func openLogFiles(t *testing.T, srv *server) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", srv.cmd.Process.Pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err == nil && (strings.HasSuffix(target, ".log") || strings.HasSuffix(target, ".index")) && strings.Contains(target, "/log/") {
			n++
		}
	}
	return n
}
