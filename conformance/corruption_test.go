package conformance_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
)

// Tests that damage the files of a stopped server and start it again
// (docs/operations.md, "Corruption and repair").

const (
	corruptBatches   = 40 // one frame each: the tables have one bucket
	corruptBatchRows = 50
)

var corruptSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func corruptSpec(table string) client.TableSpec {
	return client.TableSpec{Table: table, Columns: []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: "STRING"}},
		Options: map[string]string{"bucket.num": "1"}}
}

// corruptEnv is a server and a client to it that follows its restarts.
type corruptEnv struct {
	t   *testing.T
	ctx context.Context
	srv *server
	mem *memory.CheckedAllocator
	c   *client.Client
}

func newCorruptEnv(t *testing.T) *corruptEnv {
	srv := startServer(t)
	e := &corruptEnv{t: t, ctx: testContext(t, time.Minute), srv: srv, mem: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	e.dial()
	t.Cleanup(func() {
		e.c.Close()
		e.mem.AssertSize(t, 0)
	})
	return e
}

func (e *corruptEnv) dial() {
	e.t.Helper()
	c, err := client.Dial(e.ctx, e.srv.addr, client.WithAllocator(e.mem))
	if err != nil {
		e.t.Fatal(err)
	}
	if e.c != nil {
		e.c.Close()
	}
	e.c = c
}

func (e *corruptEnv) start() {
	e.t.Helper()
	if err := e.srv.start(); err != nil {
		e.t.Fatal(err)
	}
	e.dial()
}

func (e *corruptEnv) create(spec client.TableSpec) *client.TableInfo {
	e.t.Helper()
	info, err := e.c.CreateTable(e.ctx, spec, false)
	if err != nil {
		e.t.Fatalf("create %s: %v", spec.Table, err)
	}
	return info
}

// write writes batches of corruptBatchRows rows with ids from 0 on, one
// acknowledged batch at a time.
func (e *corruptEnv) write(table string, batches int) {
	e.t.Helper()
	if err := e.tryWrite(table, batches); err != nil {
		e.t.Fatalf("write to %s: %v", table, err)
	}
}

func (e *corruptEnv) tryWrite(table string, batches int) error {
	w, err := e.c.NewWriter(e.ctx, client.WriteRequest{Table: table})
	if err != nil {
		return err
	}
	defer w.Close()
	for b := range batches {
		rb := array.NewRecordBuilder(e.mem, corruptSchema)
		for r := range corruptBatchRows {
			rb.Field(0).(*array.Int64Builder).Append(int64(b*corruptBatchRows + r))
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d of batch %d", r, b))
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		_, err := w.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("batch %d: %w", b, err)
		}
	}
	return nil
}

// scan returns the ids of a table, sorted.
func (e *corruptEnv) scan(table string) ([]int64, error) {
	tbl, err := e.c.ReadAll(e.ctx, client.ScanRequest{Table: table, Columns: []string{"id"}})
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	var ids []int64
	for _, chunk := range tbl.Column(0).Data().Chunks() {
		ids = append(ids, chunk.(*array.Int64).Int64Values()...)
	}
	slices.Sort(ids)
	return ids, nil
}

// wantIDs checks that a table holds exactly the ids [0, n).
func (e *corruptEnv) wantIDs(table string, n int) {
	e.t.Helper()
	ids, err := e.scan(table)
	if err != nil {
		e.t.Fatalf("scan %s: %v", table, err)
	}
	for i, id := range ids {
		if id != int64(i) {
			e.t.Fatalf("%s holds id %d at position %d: want ids 0 to %d", table, id, i, n-1)
		}
	}
	if len(ids) != n {
		e.t.Fatalf("%s holds %d rows, want %d", table, len(ids), n)
	}
}

// segment returns the path of the only log segment of a one-bucket table.
func (e *corruptEnv) segment(id int64) string {
	e.t.Helper()
	segs, err := filepath.Glob(filepath.Join(e.srv.dir, "tables", strconv.FormatInt(id, 10), "0", "log", "*.log"))
	if err != nil || len(segs) != 1 {
		e.t.Fatalf("segments of table %d: %v (%v), want one", id, segs, err)
	}
	return segs[0]
}

// frameStarts returns where each frame of a segment file starts, reading the
// length field of each frame header (docs/format/log-segment.md).
func frameStarts(t *testing.T, path string) (starts []int64, data []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for pos := int64(0); pos < int64(len(data)); pos += int64(binary.LittleEndian.Uint32(data[pos+4:])) {
		starts = append(starts, pos)
	}
	return starts, data
}

var corruptMessage = regexp.MustCompile(`corrupt log segment (\S+) at byte (\d+)`)

// A segment damaged in the middle makes its table refuse every call with
// DATA_LOSS naming the file and byte, while the server serves the other
// tables and cuts nothing; the operator's repair then cuts the log there and
// the table serves the frames before the cut. A primary-key table's state,
// which holds the cut changes, is rebuilt from the changelog kept.
func TestCorruptSegmentRefusedThenRepaired(t *testing.T) {
	pkSpec := corruptSpec("fluss.corrupt_pk")
	pkSpec.Columns[0].Nullable = new(false)
	pkSpec.PrimaryKey = []string{"id"}
	for _, spec := range []client.TableSpec{corruptSpec("fluss.corrupt_log"), pkSpec} {
		t.Run(spec.Table, func(t *testing.T) { corruptAndRepair(t, spec) })
	}
}

func corruptAndRepair(t *testing.T, spec client.TableSpec) {
	e := newCorruptEnv(t)
	table := spec.Table
	bad := e.create(spec)
	e.create(corruptSpec("fluss.healthy_log"))
	e.write(table, corruptBatches)
	e.write("fluss.healthy_log", 2)
	if err := e.srv.stop(); err != nil {
		t.Fatal(err)
	}

	path := e.segment(bad.TableID)
	starts, data := frameStarts(t, path)
	if len(starts) != corruptBatches {
		t.Fatalf("%s holds %d frames, want %d", path, len(starts), corruptBatches)
	}
	mid := int64(len(data) / 2)
	for i := range int64(16) {
		data[mid+i] ^= 0xff
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := len(starts) - 1
	for damaged > 0 && starts[damaged] > mid {
		damaged--
	}

	e.start()
	e.wantIDs("fluss.healthy_log", 2*corruptBatchRows)
	_, err := e.scan(table)
	if status.Code(err) != codes.DataLoss {
		t.Fatalf("scan of the damaged table: %v, want DATA_LOSS", err)
	}
	m := corruptMessage.FindStringSubmatch(err.Error())
	if m == nil || m[1] != path || m[2] != strconv.FormatInt(starts[damaged], 10) {
		t.Fatalf("scan of the damaged table: %v\nwant it to name %s at byte %d", err, path, starts[damaged])
	}
	if err := e.tryWrite(table, 1); status.Code(err) != codes.DataLoss {
		t.Fatalf("write to the damaged table: %v, want DATA_LOSS", err)
	}
	if after, err := os.ReadFile(path); err != nil || len(after) != len(data) {
		t.Fatalf("%s has %d bytes after the restart (%v), want the %d it had: nothing may be cut", path, len(after), err, len(data))
	}

	repair := []string{"repair", "--data", e.srv.dir, "--table", table, "--truncate-at", m[1] + ":" + m[2]}
	if out, err := exec.Command(e.srv.bin, repair...).CombinedOutput(); err == nil || !strings.Contains(string(out), "the server must be stopped") {
		t.Fatalf("repair beside the running server: %v\n%s\nwant it refused", err, out)
	}
	if err := e.srv.stop(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(e.srv.bin, repair...).CombinedOutput()
	if err != nil {
		t.Fatalf("repair: %v\n%s", err, out)
	}
	t.Logf("repair:\n%s", out)
	e.start()
	e.wantIDs(table, damaged*corruptBatchRows)
	e.write(table, 1) // it takes writes again
	e.wantIDs("fluss.healthy_log", 2*corruptBatchRows)
}

// A last frame cut short after a crash is a torn write: the server cuts it
// without a word and serves the frames before it.
func TestTornTailRecoveredSilently(t *testing.T) {
	e := newCorruptEnv(t)
	info := e.create(corruptSpec("fluss.torn_log"))
	e.write("fluss.torn_log", corruptBatches)
	if err := e.srv.kill(); err != nil {
		t.Fatal(err)
	}
	path := e.segment(info.TableID)
	starts, data := frameStarts(t, path)
	last := starts[len(starts)-1]
	if err := os.Truncate(path, last+(int64(len(data))-last)/2); err != nil {
		t.Fatal(err)
	}
	e.start()
	e.wantIDs("fluss.torn_log", (corruptBatches-1)*corruptBatchRows)
	if log := e.srv.log.String(); strings.Contains(log, "corrupt") {
		t.Fatalf("a torn tail was reported as corruption:\n%s", log)
	}
}

// Deleting the catalog loses no table data: the tables' directories go to
// quarantine, and the ids they had are not handed out again, so a new
// primary-key table does not meet the old one's state.
func TestCatalogLossQuarantinesData(t *testing.T) {
	e := newCorruptEnv(t)
	pkSpec := corruptSpec("fluss.lost_pk")
	pkSpec.Columns[0].Nullable = new(false)
	pkSpec.PrimaryKey = []string{"id"}
	pk := e.create(pkSpec)
	lg := e.create(corruptSpec("fluss.lost_log"))
	e.write("fluss.lost_pk", 2)
	e.write("fluss.lost_log", 2)
	if err := e.srv.stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(e.srv.dir, "catalog")); err != nil {
		t.Fatal(err)
	}

	e.start()
	for _, id := range []int64{pk.TableID, lg.TableID} {
		if _, err := os.Stat(filepath.Join(e.srv.dir, "tables", strconv.FormatInt(id, 10))); !os.IsNotExist(err) {
			t.Errorf("tables/%d is still there (%v), want it moved to quarantine", id, err)
		}
		q, err := filepath.Glob(filepath.Join(e.srv.dir, "quarantine", "*-"+strconv.FormatInt(id, 10), "0", "log", "*.log"))
		if err != nil || len(q) != 1 {
			t.Errorf("quarantined log of table %d: %v (%v), want one segment", id, q, err)
		}
	}
	if log := e.srv.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "quarantine") {
		t.Errorf("the server did not log the quarantine at ERROR:\n%s", log)
	}
	again := e.create(pkSpec)
	if again.TableID <= max(pk.TableID, lg.TableID) {
		t.Fatalf("new table id %d reuses an id of the lost catalog (%d, %d)", again.TableID, pk.TableID, lg.TableID)
	}
	e.write("fluss.lost_pk", 1)
	e.wantIDs("fluss.lost_pk", corruptBatchRows)
}

// A damaged catalog log (pebble cuts it at the damage without a word) is
// found out by the table data it no longer names: the server refuses to
// start, naming the catalog's log, rather than serve without those tables.
func TestDamagedCatalogRefusesToStart(t *testing.T) {
	e := newCorruptEnv(t)
	for i := range 4 {
		e.create(corruptSpec(fmt.Sprintf("fluss.cat_%d", i)))
	}
	if err := e.srv.stop(); err != nil {
		t.Fatal(err)
	}
	wals, err := filepath.Glob(filepath.Join(e.srv.dir, "catalog", "*.log"))
	if err != nil || len(wals) != 1 {
		t.Fatalf("catalog logs %v (%v), want one", wals, err)
	}
	data, err := os.ReadFile(wals[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		data[len(data)/2+i] ^= 0xff
	}
	if err := os.WriteFile(wals[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.start(); err == nil {
		t.Fatal("the server started on a damaged catalog")
	}
	if log := e.srv.log.String(); !strings.Contains(log, "is behind the table data") || !strings.Contains(log, wals[0]) {
		t.Fatalf("the server's refusal does not name the catalog's log %s:\n%s", wals[0], log)
	}
	if ents, err := os.ReadDir(filepath.Join(e.srv.dir, "tables")); err != nil || len(ents) != 4 {
		t.Fatalf("tables/ holds %d entries (%v) after the refusal, want the 4 tables' data", len(ents), err)
	}
}
