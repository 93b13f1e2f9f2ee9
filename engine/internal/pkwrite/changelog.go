package pkwrite

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/row"
)

// changelogBuilder collects the changes of one bucket's part of a write into
// a changelog batch.
type changelogBuilder struct {
	b     *array.RecordBuilder
	kinds []byte
}

func newChangelogBuilder(schema *arrow.Schema, mem memory.Allocator) *changelogBuilder {
	return &changelogBuilder{b: array.NewRecordBuilder(mem, schema), kinds: []byte{}}
}

func (c *changelogBuilder) add(changes []merge.Change) {
	for _, ch := range changes {
		row.AppendRow(c.b, ch.Row)
		c.kinds = append(c.kinds, byte(ch.Kind))
	}
}

func (c *changelogBuilder) release() { c.b.Release() }

// finish returns the changes as a batch of the changelog; a write that
// changed nothing still yields one, without rows, which takes one offset.
func (c *changelogBuilder) finish() changelogPart {
	rec := c.b.NewRecordBatch()
	c.b.Release()
	return changelogPart{rec: rec, kinds: c.kinds}
}

// changelogPart is the changelog of one bucket's part of a write.
type changelogPart struct {
	rec   arrow.RecordBatch
	kinds []byte
}

// encode turns the part into a changelog frame.
func (c changelogPart) encode(enc *logstore.Encoder, schemaID int32, w logstore.Writer) (*logstore.Batch, error) {
	meta := logstore.BatchMeta{SchemaID: schemaID, ChangeTypes: c.kinds, WriterID: w.ID, WriterSeq: -1, Stats: framestats.Compute(c.rec)}
	if w.ID != "" {
		meta.WriterSeq = w.Seq
	}
	return enc.Encode(c.rec, meta)
}

// changelog is a write's changelog on its way to the log: inflight appends
// it in write order.
type changelog struct {
	t       *table.Table
	sch     *table.Schema
	mem     memory.Allocator
	writer  logstore.Writer
	buckets []int
	parts   []changelogPart // per bucket, until appended
}

// Append encodes the changelog, one frame per bucket, and appends them as
// one atomic unit.
func (c *changelog) Append() (*logstore.Pending, error) {
	t, info := c.t, c.sch.Info
	enc, err := c.sch.GetEncoder(t.Codec, c.mem)
	if err != nil {
		return nil, err
	}
	defer c.sch.PutEncoder(enc)
	parts := make([]logstore.Part, 0, len(c.parts))
	for i, p := range c.parts {
		b, err := p.encode(enc, info.SchemaID, c.writer)
		if err != nil {
			logstore.ReleaseParts(parts)
			return nil, err
		}
		parts = append(parts, logstore.Part{Bucket: c.buckets[i], Batch: b})
	}
	c.Release()
	pending, err := t.Log.AppendAsync(parts, c.writer)
	if err != nil && t.Dropped.Load() {
		err = errs.New(errs.NotFound, "table %s was dropped", info.Path())
	}
	return pending, err
}

// Release lets go of the changelog's records.
func (c *changelog) Release() {
	for _, p := range c.parts {
		p.rec.Release()
	}
	c.parts = nil
}
