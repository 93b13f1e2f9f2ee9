package logwrite

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// partitionRoute is the write side of a partitioned table: it groups a
// batch's rows by their partition values and hands each group to the
// stream of its partition, opened on first use (and the partition created,
// unless the request turned dynamic creation off).
type partitionRoute struct {
	env     *Env
	info    *catalog.TableInfo // the partitioned table's
	req     protocol.WriteRequest
	create  bool
	streams map[string]*Stream // by partition name
}

// openPartitioned validates a write to a partitioned table as a write to
// any of its partitions would be, and returns the routing stream.
func openPartitioned(env *Env, info *catalog.TableInfo, req protocol.WriteRequest) (*Stream, error) {
	sch, err := table.NewSchema(info, env.Alloc)
	if err != nil {
		return nil, err
	}
	w, err := openStream(env, nil, sch, req)
	if err != nil {
		return nil, err
	}
	w.parts = &partitionRoute{env: env, info: info, req: req, create: req.CreatePartitions == nil || *req.CreatePartitions,
		streams: map[string]*Stream{}}
	return w, nil
}

// stream returns the write stream of a partition, creating the partition if
// the route may.
func (r *partitionRoute) stream(values []string) (*Stream, error) {
	name := partition.Name(values)
	if w := r.streams[name]; w != nil && !w.t.Dropped.Load() {
		return w, nil
	}
	t, p, err := r.env.Tables.PartitionOf(r.info, values, r.create)
	if err != nil {
		return nil, err
	}
	// The partition's stream writes in the schema the route opened with, as
	// a table's stream does across an alter: a log table's batches go on in
	// it, a primary-key table's are refused with "open it again".
	sch := t.Current()
	if sch.Info.SchemaID != r.info.SchemaID {
		if sch, err = table.NewSchema(r.info.ForPartition(p), r.env.Alloc); err != nil {
			return nil, err
		}
	}
	w, err := openStream(r.env, t, sch, r.req)
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
func (w *Stream) submitPartitioned(ctx context.Context, rec arrow.RecordBatch, seq int64) (*Pending, error) {
	rec, err := w.intake(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	// Checked whole before any part is submitted (and each part again
	// against its partition's definition, in case an alter came between).
	if err := lakeRange(w.info, rec); err != nil {
		return nil, err
	}
	groups, err := partition.GroupRows(w.parts.info.Path().String(), w.parts.info.PartitionKeys, rec)
	if err != nil {
		return nil, err
	}
	streams := make([]*Stream, len(groups))
	for i, g := range groups {
		if streams[i], err = w.parts.stream(g.Values); err != nil {
			return nil, err
		}
	}
	pending := &Pending{
		res:   Result{Sequence: seq, Rows: rec.NumRows(), PartitionOffsets: protocol.PartitionOffsets{}},
		parts: make(map[string]*Pending, len(groups)),
	}
	for i, g := range groups {
		part := rec
		if len(groups) > 1 {
			if part, err = row.Take(ctx, rec, g.Rows, w.env.Alloc); err != nil {
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
		pending.parts[partition.Name(g.Values)] = p
	}
	return pending, nil
}

// waitPartitions waits for every partition's part of a batch.
func (p *Pending) waitPartitions() (Result, error) {
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
func (p *Pending) abandon() error {
	_, err := p.waitPartitions()
	return err
}
