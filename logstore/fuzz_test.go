package logstore

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
)

// FuzzFrame feeds arbitrary bytes to the frame decoder and to recovery: they
// must be rejected or read, never panic (also when the values decoded are
// read), and recovery must leave only whole, intact frames.
func FuzzFrame(f *testing.F) {
	mem := memtest.Allocator(f)
	enc, err := NewEncoder(testSchema, CodecZstd, 3, mem)
	if err != nil {
		f.Fatal(err)
	}
	rec := makeRecord(f, mem, 0, 5)
	b, err := enc.Encode(rec, BatchMeta{SchemaID: 1, WriterID: "w", WriterSeq: 3})
	rec.Release()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b.bytes())
	f.Add(b.bytes()[:fixedHeaderSize])
	b.Release()
	f.Add([]byte("FGL1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, err := parseHeader(data); err == nil && int(h.length) <= len(data) {
			if p, err := parsePrefix(&h, data[:h.length]); err == nil {
				dec := NewDecoder(testSchema, mem)
				for i := range p.colOffsets {
					if i >= testSchema.NumFields() {
						break
					}
					meta := data[p.colOffsets[i] : p.colOffsets[i]+p.metaLens[i]]
					body := data[p.colOffsets[i]+p.metaLens[i] : p.colOffsets[i]+p.metaLens[i]+p.bodyLens[i]]
					if a, err := dec.Column(i, meta, body, h.codec(), int(p.rawLens[i]), h.byBuffer()); err == nil {
						readEvery(a)
						a.Release()
					}
				}
			}
		}
		dir := t.TempDir()
		writeSegment(t, dir, data)
		tbl, err := Open(dir, 1, Options{})
		if err != nil {
			return
		}
		defer tbl.Close()
		r, err := tbl.NewReader(0, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for {
			fr, err := r.Next(tbl.HighWatermark(0))
			if err != nil {
				t.Fatalf("recovered log is unreadable: %v", err)
			}
			if fr == nil {
				return
			}
			if rec, err := fr.Record(NewDecoder(testSchema, mem), testSchema); err == nil {
				for _, col := range rec.Columns() {
					readEvery(col)
				}
				rec.Release()
			}
		}
	})
}

// readEvery reads every value of a, as an encoder sending it would.
func readEvery(a arrow.Array) {
	for i := range a.Len() {
		_ = a.ValueStr(i)
	}
}
