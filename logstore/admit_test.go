package logstore

import (
	"errors"
	"testing"
)

// A reader tells Admit what each frame it reads will take, before it reads
// the frame's columns: at least the bytes it then reads, less for a
// projection; an error from Admit is Next's, and nothing more is read.
func TestAdmitBeforeReading(t *testing.T) {
	mem := checkedMem(t)
	tbl := mustOpen(t, t.TempDir(), 1, Options{})
	defer tbl.Close()
	enc := newEncoder(t, CodecZstd, mem)
	for i := range 2 {
		appendRows(t, tbl, enc, mem, 0, i*50000, 50000, nil)
	}
	admitted := func(cols []int) []int64 {
		t.Helper()
		r, err := tbl.NewReader(0, 0, cols)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var sizes []int64
		r.Admit(func(n int64) error {
			sizes = append(sizes, n)
			return nil
		})
		for {
			before := tbl.BytesRead()
			f, err := r.Next(r.HighWatermark())
			if err != nil {
				t.Fatal(err)
			}
			if f == nil {
				return sizes
			}
			if read := tbl.BytesRead() - before; len(sizes) == 0 || sizes[len(sizes)-1] < read-int64(minHead) {
				t.Fatalf("frame at %d: %d bytes read past its header, %v admitted", f.BaseOffset, read, sizes)
			}
		}
	}
	all, ids := admitted(nil), admitted([]int{0})
	if len(all) != 2 || len(ids) != 2 {
		t.Fatalf("admitted %d and %d frames, want 2 each", len(all), len(ids))
	}
	if ids[0] >= all[0] {
		t.Fatalf("a frame takes %d bytes with one column, %d with all", ids[0], all[0])
	}

	r, err := tbl.NewReader(0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	full := errors.New("no memory")
	r.Admit(func(int64) error { return full })
	before := tbl.BytesRead()
	if _, err := r.Next(r.HighWatermark()); !errors.Is(err, full) {
		t.Fatalf("Next with Admit failing: %v, want its error", err)
	}
	if read := tbl.BytesRead() - before; read > int64(minHead) {
		t.Fatalf("%d bytes read with Admit failing, want no more than the header (%d)", read, minHead)
	}
}
