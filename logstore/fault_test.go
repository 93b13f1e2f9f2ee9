package logstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/diskfault"
)

// faultyLog opens a one-bucket log on a filesystem whose faults the test
// sets.
func faultyLog(t *testing.T) (*Table, *diskfault.FS, string) {
	t.Helper()
	dir := t.TempDir()
	fs := diskfault.New(vfs.Default)
	tbl := mustOpen(t, dir, 1, Options{FS: fs})
	t.Cleanup(func() { tbl.Close() })
	return tbl, fs, dir
}

// tryAppend appends ids [from, from+n) to bucket 0 as writer w.
func tryAppend(t *testing.T, tbl *Table, enc *Encoder, mem memory.Allocator, from, n int, w Writer) (Result, error) {
	t.Helper()
	rec := makeRecord(t, mem, from, n)
	defer rec.Release()
	return tbl.Append([]Part{{Bucket: 0, Batch: encode(t, enc, rec, w)}}, w)
}

// ids reads every id of bucket 0 below the high watermark.
func ids(t *testing.T, tbl *Table, mem memory.Allocator) []int64 {
	t.Helper()
	dec := NewDecoder(testSchema, mem)
	var out []int64
	eachFrame(t, tbl, func(f *Frame) {
		rec, err := f.Record(dec, testSchema)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.Column(0).(*array.Int64).Int64Values()...)
		rec.Release()
	})
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func wantFault(t *testing.T, err error, kind errs.Kind, cause error) {
	t.Helper()
	if !errs.Is(err, kind) || !errors.Is(err, cause) {
		t.Fatalf("got %v (kind %v), want kind %v caused by %v", err, errs.KindOf(err), kind, cause)
	}
}

func TestFaultFailedWriteFailsAppendsUntilTheDiskWorks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		errno syscall.Errno
		kind  errs.Kind
	}{
		{"disk full", syscall.ENOSPC, errs.ResourceExhausted},
		{"I/O error", syscall.EIO, errs.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) { testFailedWrite(t, tc.errno, tc.kind) })
	}
}

func testFailedWrite(t *testing.T, errno syscall.Errno, kind errs.Kind) {
	mem := checkedMem(t)
	enc := newEncoder(t, CodecNone, mem)
	tbl, fs, dir := faultyLog(t)
	w := func(seq int64) Writer { return Writer{ID: "w", Seq: seq} }
	if _, err := tryAppend(t, tbl, enc, mem, 0, 10, w(0)); err != nil {
		t.Fatal(err)
	}

	fs.Set(diskfault.Write, ".log", errno)
	_, err := tryAppend(t, tbl, enc, mem, 10, 10, w(1))
	wantFault(t, err, kind, errno)
	_, err = tryAppend(t, tbl, enc, mem, 10, 10, w(1))
	wantFault(t, err, kind, errno)
	if got := ids(t, tbl, mem); !slices.Equal(got, span(0, 10)) {
		t.Fatalf("reads while writes fail: %v", got)
	}

	fs.Clear()
	// The retried batch is new to the log: the failed attempts left no
	// trace, not even in the idempotent writer's state.
	res, err := tryAppend(t, tbl, enc, mem, 10, 10, w(1))
	if err != nil {
		t.Fatalf("append once the disk works: %v", err)
	}
	if res.Duplicate || res.Ends[0] != 20 {
		t.Fatalf("append once the disk works: %+v, want end 20, not a duplicate", res)
	}
	if got := ids(t, tbl, mem); !slices.Equal(got, span(0, 20)) {
		t.Fatalf("after recovery: %v", got)
	}

	// What is on disk is what was acknowledged, once.
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	again := mustOpen(t, dir, 1, Options{})
	defer again.Close()
	if got := ids(t, again, mem); !slices.Equal(got, span(0, 20)) {
		t.Fatalf("after reopening: %v", got)
	}
}

func TestFaultFailedFsyncIsStickyUntilRecovered(t *testing.T) {
	mem := checkedMem(t)
	enc := newEncoder(t, CodecNone, mem)
	tbl, fs, dir := faultyLog(t)
	if _, err := tryAppend(t, tbl, enc, mem, 0, 10, Writer{}); err != nil {
		t.Fatal(err)
	}
	segPath := filepath.Join(dir, "0", "log", segmentName(0)+".log")
	good := fileSize(t, segPath)

	fs.Set(diskfault.Sync, ".log", syscall.EIO)
	_, err := tryAppend(t, tbl, enc, mem, 10, 10, Writer{})
	wantFault(t, err, errs.Unavailable, syscall.EIO)
	// What follows a failed fsync is unknown: no append may be written
	// after it until the log has recovered, which the failing disk
	// prevents.
	_, err = tryAppend(t, tbl, enc, mem, 20, 10, Writer{})
	wantFault(t, err, errs.Unavailable, syscall.EIO)
	if got := fileSize(t, segPath); got != good {
		t.Fatalf("segment is %d bytes after appends behind a failed fsync, want %d (the last good sync)", got, good)
	}

	fs.Clear()
	res, err := tryAppend(t, tbl, enc, mem, 30, 10, Writer{})
	if err != nil {
		t.Fatalf("append after the disk recovered: %v", err)
	}
	if res.Ends[0] != 20 {
		t.Fatalf("end offset %d, want 20: the failed appends took no offsets", res.Ends[0])
	}
	if got, want := ids(t, tbl, mem), append(span(0, 10), span(30, 40)...); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

func TestFaultAppendCutByRecoveryFailsWhenWaitedForLater(t *testing.T) {
	mem := checkedMem(t)
	enc := newEncoder(t, CodecNone, mem)
	tbl, fs, _ := faultyLog(t)

	fs.Set(diskfault.Sync, ".log", syscall.EIO)
	rec := makeRecord(t, mem, 0, 10)
	lost, err := tbl.AppendAsync([]Part{{Bucket: 0, Batch: encode(t, enc, rec, Writer{})}}, Writer{})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	_, err = tryAppend(t, tbl, enc, mem, 10, 10, Writer{})
	wantFault(t, err, errs.Unavailable, syscall.EIO)

	fs.Clear()
	if _, err := tryAppend(t, tbl, enc, mem, 20, 10, Writer{}); err != nil {
		t.Fatal(err)
	}
	// The recovered log reuses the cut append's txn id; waiting for it must
	// not mistake the new append for it.
	if _, err := lost.Wait(); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("waiting for an append that recovery cut: %v, want unavailable", err)
	}
	if got := ids(t, tbl, mem); !slices.Equal(got, span(20, 30)) {
		t.Fatalf("rows %v, want 20..29", got)
	}
}

func TestFaultReadErrorIsUnavailableAndPasses(t *testing.T) {
	mem := checkedMem(t)
	enc := newEncoder(t, CodecNone, mem)
	tbl, fs, _ := faultyLog(t)
	if _, err := tryAppend(t, tbl, enc, mem, 0, 10, Writer{}); err != nil {
		t.Fatal(err)
	}

	fs.Set(diskfault.Read, ".log", syscall.EIO)
	r, err := tbl.NewReader(0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next(tbl.HighWatermark(0))
	r.Close()
	wantFault(t, err, errs.Unavailable, syscall.EIO)
	// A failed read does not stop writes.
	if _, err := tryAppend(t, tbl, enc, mem, 10, 10, Writer{}); err != nil {
		t.Fatalf("append while reads fail: %v", err)
	}

	fs.Clear()
	if got := ids(t, tbl, mem); !slices.Equal(got, span(0, 20)) {
		t.Fatalf("rows %v, want 0..19", got)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// A reader following the log's tail across a fault and its recovery sees
// the next acknowledged append, and nothing of the cut ones.
func TestFaultTailingReaderFollowsAcrossRecovery(t *testing.T) {
	mem := checkedMem(t)
	enc := newEncoder(t, CodecNone, mem)
	tbl, fs, _ := faultyLog(t)
	if _, err := tryAppend(t, tbl, enc, mem, 0, 10, Writer{}); err != nil {
		t.Fatal(err)
	}
	r, err := tbl.NewReader(0, tbl.HighWatermark(0), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	fs.Set(diskfault.Sync, ".log", syscall.EIO)
	_, err = tryAppend(t, tbl, enc, mem, 10, 10, Writer{})
	wantFault(t, err, errs.Unavailable, syscall.EIO)
	fs.Clear()
	if _, err := tryAppend(t, tbl, enc, mem, 20, 10, Writer{}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Wait(ctx); err != nil {
		t.Fatalf("the tailing reader was not woken: %v", err)
	}
	f, err := r.Next(tbl.HighWatermark(0))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.Record(NewDecoder(testSchema, mem), testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if got := rec.Column(0).(*array.Int64).Int64Values(); f.BaseOffset != 10 || !slices.Equal(got, span(20, 30)) {
		t.Fatalf("the reader got offset %d ids %v, want offset 10 ids 20..29", f.BaseOffset, got)
	}
}
