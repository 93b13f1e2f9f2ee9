package logstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/diskfault"
)

// openFilesUnder counts this process's descriptors open on files under dir.
func openFilesUnder(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// With a budget of 8 descriptors, two logs of 12 buckets each (48 files
// and more as their segments roll) append, read, close and recover: every
// call succeeds, and at no point between calls are more than 8 of their
// files open, whether the cache or the process counts them. An idle reader
// holds no descriptor.
func TestFileCacheBoundsOpenFiles(t *testing.T) {
	const budget, tables, buckets, rounds = 8, 2, 12, 3
	mem := checkedMem(t)
	enc := newEncoder(t, CodecNone, mem)
	root := t.TempDir()
	files := NewFileCache(budget)
	opts := Options{SegmentBytes: 2 << 10, Files: files}
	check := func(when string) {
		t.Helper()
		if n, m := files.Open(), openFilesUnder(t, root); n > budget || m > budget {
			t.Fatalf("%s: the cache has %d files open, the process %d; want at most %d", when, n, m, budget)
		}
	}
	open := func() []*Table {
		var tbls []*Table
		for i := range tables {
			tbls = append(tbls, mustOpen(t, filepath.Join(root, fmt.Sprint(i)), buckets, opts))
			check(fmt.Sprintf("open table %d", i))
		}
		return tbls
	}
	tbls := open()
	idle, err := tbls[0].NewReader(0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	want := map[[2]int][]int64{}
	for r := range rounds {
		for i, tbl := range tbls {
			for b := range buckets {
				from := (r*tables*buckets + i*buckets + b) * 10
				appendRows(t, tbl, enc, mem, b, from, 10, nil)
				want[[2]int{i, b}] = append(want[[2]int{i, b}], span(int64(from), int64(from+10))...)
				check(fmt.Sprintf("round %d: append to table %d bucket %d", r, i, b))
			}
		}
		if r == 0 {
			if f, err := idle.Next(idle.HighWatermark()); err != nil || f == nil {
				t.Fatalf("idle reader: %v, %v", f, err)
			}
		}
	}
	readBack := func(when string) {
		t.Helper()
		for i, tbl := range tbls {
			for b := range buckets {
				if got := readAll(t, tbl, b, 0, nil, mem); !slices.Equal(got, want[[2]int{i, b}]) {
					t.Fatalf("%s: table %d bucket %d holds %v, want %v", when, i, b, got, want[[2]int{i, b}])
				}
				check(fmt.Sprintf("%s: read table %d bucket %d", when, i, b))
			}
		}
	}
	readBack("before restart")
	if segs := len(tbls[0].buckets[0].segments()); segs < 2 {
		t.Fatalf("bucket 0 has %d segments, want several (sealed ones too)", segs)
	}
	idle.Close()
	for _, tbl := range tbls {
		if err := tbl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := files.Open(); n != 0 {
		t.Fatalf("%d files open after every log closed", n)
	}
	tbls = open()
	readBack("after restart")
	for _, tbl := range tbls {
		if err := tbl.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A log file closed to make room is synced first; when that fsync fails, the
// table's next sync fails too, although an fsync through a new descriptor
// would succeed: the writes may be lost, and the append is not acknowledged.
func TestFileCacheEvictionSyncFailureFailsTheAppend(t *testing.T) {
	mem := checkedMem(t)
	enc := newEncoder(t, CodecNone, mem)
	fs := diskfault.New(vfs.Default)
	files := NewFileCache(2)
	tbl := mustOpen(t, t.TempDir(), 2, Options{FS: fs, Files: files})
	defer tbl.Close()
	appendRows(t, tbl, enc, mem, 0, 0, 10, nil)

	rec := makeRecord(t, mem, 10, 10)
	defer rec.Release()
	p, err := tbl.AppendAsync([]Part{{Bucket: 0, Batch: encode(t, enc, rec, Writer{})}}, Writer{})
	if err != nil {
		t.Fatal(err)
	}
	tbl.appendMu.Lock()
	if err := tbl.frames.wait(tbl.frames.queued); err != nil {
		t.Fatal(err)
	}
	tbl.appendMu.Unlock()
	log0 := tbl.buckets[0].active().logPath
	fs.Set(diskfault.Sync, log0, syscall.EIO)
	for _, f := range []*cachedFile{tbl.buckets[1].active().f, tbl.buckets[1].active().idx} {
		if _, err := f.Stat(); err != nil { // makes room: bucket 0's files go
			t.Fatal(err)
		}
	}
	fs.Clear()
	_, err = p.Wait()
	if !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("append after its file failed to sync on eviction: %v, want UNAVAILABLE with the fsync's error", err)
	}
	// The log recovers as after any storage fault: the acknowledged rows
	// stay, and it takes appends again.
	appendRows(t, tbl, enc, mem, 0, 20, 10, nil)
	if got := readAll(t, tbl, 0, 0, nil, mem); !slices.Equal(got, append(span(0, 10), span(20, 30)...)) {
		t.Fatalf("bucket 0 holds %v after recovery, want ids 0-9 and 20-29", got)
	}
}

// A reader of a segment that retention removes reads on, although its file
// is gone and the cache had closed it to make room.
func TestFileCacheReaderOfRemovedSegment(t *testing.T) {
	mem := checkedMem(t)
	enc := newEncoder(t, CodecNone, mem)
	now := time.Now()
	files := NewFileCache(2)
	tbl := mustOpen(t, t.TempDir(), 2, Options{SegmentBytes: 2 << 10, Now: func() time.Time { return now }, Files: files})
	defer tbl.Close()
	for i := range 10 {
		appendRows(t, tbl, enc, mem, 0, i*10, 10, nil)
	}
	r, err := tbl.NewReader(0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := r.Next(r.HighWatermark())
	if err != nil || f == nil {
		t.Fatalf("first frame: %v, %v", f, err)
	}
	end := tbl.buckets[0].segments()[0].next
	now = now.Add(time.Hour)
	if n, err := tbl.Expire(time.Minute, nil); err != nil || n == 0 {
		t.Fatalf("expired %d segments (%v), want some", n, err)
	}
	appendRows(t, tbl, enc, mem, 1, 0, 10, nil) // bucket 1's files take the room
	for r.Offset() < end {
		if f, err = r.Next(end); err != nil || f == nil {
			t.Fatalf("reading on in the removed segment at offset %d (it ends at %d): %v, %v", r.Offset(), end, f, err)
		}
	}
}

// Goroutines reading, writing and syncing 32 files through a cache of 4
// descriptors: each sees its own writes, the cache never has more open than
// the budget and two per operation under way (its file, and one it closes to
// make room), and none is left open.
func TestFileCacheConcurrentUse(t *testing.T) {
	const budget, nfiles, workers, ops = 4, 32, 8, 200
	dir := t.TempDir()
	files := NewFileCache(budget)
	var cfs []*cachedFile
	for i := range nfiles {
		cf, err := openCached(files, vfs.Default, filepath.Join(dir, fmt.Sprint(i)), true)
		if err != nil {
			t.Fatal(err)
		}
		cfs = append(cfs, cf)
	}
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for k := range ops {
				cf := cfs[(w*7+k*13)%nfiles]
				// Each worker writes its own 8 bytes of each file.
				want := fmt.Appendf(nil, "%04d%04d", w, k)
				if _, err := cf.WriteAt(want, int64(w*8)); err != nil {
					errc <- err
					return
				}
				if k%10 == 0 {
					if err := cf.Sync(); err != nil {
						errc <- err
						return
					}
				}
				got := make([]byte, 8)
				if _, err := cf.ReadAt(got, int64(w*8)); err != nil || string(got) != string(want) {
					errc <- fmt.Errorf("worker %d read %q (%v) from %s, wrote %q", w, got, err, cf.path, want)
					return
				}
				if n := files.Open(); n > budget+2*workers {
					errc <- fmt.Errorf("%d files open, over the budget %d plus two for each of %d operations (the file it uses, one it closes)", n, budget, workers)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for _, cf := range cfs {
		if err := cf.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := cf.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n, m := files.Open(), openFilesUnder(t, dir); n != 0 || m != 0 {
		t.Fatalf("after every file closed: the cache has %d open, the process %d", n, m)
	}
}

// A file the cache closed and that is gone when it is needed again is an
// error, not a new empty file: pebble's FS opens for writing only with
// O_CREATE, so the cache asks first.
func TestFileCacheDoesNotCreateAGoneFileAgain(t *testing.T) {
	dir := t.TempDir()
	files := NewFileCache(1)
	gone, err := openCached(files, vfs.Default, filepath.Join(dir, "gone"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Close()
	other, err := openCached(files, vfs.Default, filepath.Join(dir, "other"), true) // closes gone's file to make room
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := os.Remove(gone.path); err != nil {
		t.Fatal(err)
	}
	if _, err := gone.ReadAt(make([]byte, 1), 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading a file gone since the cache closed it: %v, want not exist", err)
	}
	if _, err := os.Stat(gone.path); !os.IsNotExist(err) {
		t.Fatalf("the read made the file again: %v", err)
	}
}
