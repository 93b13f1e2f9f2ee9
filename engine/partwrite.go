package engine

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// partitionRoute is the write side of a partitioned table: it groups a
// batch's rows by their partition values and hands each group to the
// stream of its partition, opened on first use (and the partition created,
// unless the request turned dynamic creation off).
type partitionRoute struct {
	e       *Engine
	info    *catalog.TableInfo // the partitioned table's
	req     protocol.WriteRequest
	create  bool
	streams map[string]*WriteStream // by partition name
}

// openPartitionedWrite validates a write to a partitioned table as a write
// to any of its partitions would be, and returns the routing stream.
func (e *Engine) openPartitionedWrite(info *catalog.TableInfo, req protocol.WriteRequest) (*WriteStream, error) {
	sch, err := table.NewSchema(info, e.opts.Allocator)
	if err != nil {
		return nil, err
	}
	w, err := e.newWriteStream(nil, sch, req)
	if err != nil {
		return nil, err
	}
	w.parts = &partitionRoute{e: e, info: info, req: req, create: req.CreatePartitions == nil || *req.CreatePartitions,
		streams: map[string]*WriteStream{}}
	return w, nil
}

// partitionGroup is the rows of a batch that belong to one partition.
type partitionGroup struct {
	values []string
	rows   []int32
}

// group returns the partitions of rec's rows, in the order they first
// appear. A row with a NULL partition value is an error naming the column.
func (r *partitionRoute) group(rec arrow.RecordBatch) ([]*partitionGroup, error) {
	cols := make([]arrow.Array, len(r.info.PartitionKeys))
	for i, k := range r.info.PartitionKeys {
		idx := rec.Schema().FieldIndices(k)
		if len(idx) == 0 {
			return nil, errs.New(errs.Invalid, "table %s: the batch lacks partition key column %q", r.info.Path(), k)
		}
		cols[i] = rec.Column(idx[0])
	}
	var order []*partitionGroup
	byName := map[string]*partitionGroup{}
	values := make([]string, len(cols))
	for row := range int(rec.NumRows()) {
		for i, c := range cols {
			v, err := partition.ValueString(r.info.PartitionKeys[i], c, row)
			if err != nil {
				return nil, err
			}
			values[i] = v
		}
		name := partition.Name(values)
		g := byName[name]
		if g == nil {
			g = &partitionGroup{values: append([]string(nil), values...)}
			byName[name] = g
			order = append(order, g)
		}
		g.rows = append(g.rows, int32(row))
	}
	return order, nil
}

// stream returns the write stream of a partition, creating the partition if
// the route may.
func (r *partitionRoute) stream(values []string) (*WriteStream, error) {
	name := partition.Name(values)
	if w := r.streams[name]; w != nil && !w.t.Dropped.Load() {
		return w, nil
	}
	t, p, err := r.e.partitionTable(r.info, values, r.create)
	if err != nil {
		return nil, err
	}
	// The partition's stream writes in the schema the route opened with, as
	// a table's stream does across an alter: a log table's batches go on in
	// it, a primary-key table's are refused with "open it again".
	sch := t.Current()
	if sch.Info.SchemaID != r.info.SchemaID {
		if sch, err = table.NewSchema(r.info.ForPartition(p), r.e.opts.Allocator); err != nil {
			return nil, err
		}
	}
	w, err := r.e.newWriteStream(t, sch, r.req)
	if err != nil {
		return nil, err
	}
	r.streams[name] = w
	return w, nil
}

// submitPartitioned splits a batch by partition and submits each part to its
// partition's stream under the batch's sequence, so that an idempotent
// writer's retry re-applies only the parts a partition lacks. Every
// partition is found (or created) before any part is submitted: a batch for a
// missing partition that may not be created applies nothing. Parts of
// different partitions are durable independently.
func (w *WriteStream) submitPartitioned(ctx context.Context, rec arrow.RecordBatch, seq int64) (*PendingWrite, error) {
	rec, err := w.intake(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	groups, err := w.parts.group(rec)
	if err != nil {
		return nil, err
	}
	streams := make([]*WriteStream, len(groups))
	for i, g := range groups {
		if streams[i], err = w.parts.stream(g.values); err != nil {
			return nil, err
		}
	}
	pending := &PendingWrite{
		res:   WriteResult{Sequence: seq, Rows: rec.NumRows(), PartitionOffsets: protocol.PartitionOffsets{}},
		parts: make(map[string]*PendingWrite, len(groups)),
	}
	for i, g := range groups {
		part := rec
		if len(groups) > 1 {
			if part, err = take(ctx, rec, g.rows, w.e.opts.Allocator); err != nil {
				return nil, errors.Join(err, pending.abandon())
			}
		} else {
			part.Retain()
		}
		p, err := streams[i].submitAt(ctx, part, nil, seq)
		part.Release()
		if err != nil {
			return nil, errors.Join(err, pending.abandon())
		}
		pending.parts[partition.Name(g.values)] = p
	}
	return pending, nil
}

// waitPartitions waits for every partition's part of a batch.
func (p *PendingWrite) waitPartitions() (WriteResult, error) {
	var err error
	for name, part := range p.parts {
		res, perr := part.Wait()
		if perr != nil {
			err = errors.Join(err, perr)
			continue
		}
		p.res.PartitionOffsets[name] = res.Buckets
	}
	return p.res, err
}

// abandon waits for the parts already submitted of a batch that failed on a
// later part; they were applied.
func (p *PendingWrite) abandon() error {
	_, err := p.waitPartitions()
	return err
}
