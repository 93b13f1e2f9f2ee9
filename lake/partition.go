package lake

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/row"
)

// Partitioned tables (PROTOCOL.md §7.7): the Iceberg spec is identity of
// each partition key, in order, then the bucket field, as in Fluss; a data
// file's partition tuple names its fluxgate partition and bucket. Identity
// accepts every partition-key type, so unlike Fluss the keys need not be
// STRING. A fluxgate partition maps to its Iceberg partition by value, not
// by id: a partition dropped and created again shares its lake partition.

// Partition is a fluxgate partition as the lake names it: the values of the
// partition keys, in partition-key order, in row-value form (what row.Get
// returns for the key's column type). Nil on a table without partitions.
type Partition []any

// PartitionOffsets is what a snapshot holds of one fluxgate partition.
type PartitionOffsets struct {
	Name string `json:"name"`
	// Buckets maps each tiered bucket to the first offset not in the lake.
	Buckets map[int]int64 `json:"buckets"`
}

// partitionFields are the spec's identity fields of the partition keys.
func partitionFields(m *mapping) ([]iceberg.PartitionField, error) {
	fields := make([]iceberg.PartitionField, len(m.parts))
	for i, k := range m.parts {
		f, ok := m.schema.FindFieldByName(k)
		if !ok {
			return nil, fmt.Errorf("partition key %s is not a column", k)
		}
		if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
			return nil, fmt.Errorf("partition key %s is %s, which Iceberg's identity transform does not take", k, f.Type)
		}
		fields[i] = iceberg.PartitionField{SourceIDs: []int{f.ID}, FieldID: firstPartitionFieldID + i,
			Name: k, Transform: iceberg.IdentityTransform{}}
	}
	return fields, nil
}

// partitionFilter is the row filter that selects part's rows: Iceberg
// projects it onto the identity fields, so that planning opens only the
// manifests and files of that partition. It may select more: Iceberg holds
// 0 and −0 equal, where fluxgate has two partitions, so the caller keeps
// the files keepPartition says are part's. A NaN equals nothing, so NaN's
// partition is selected by is_nan.
func (m *mapping) partitionFilter(part Partition) (iceberg.BooleanExpression, error) {
	if len(part) != len(m.parts) {
		return nil, fmt.Errorf("partition %v has %d values, the table %d partition keys", part, len(part), len(m.parts))
	}
	var expr iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	for i, k := range m.parts {
		if isNaN(part[i]) {
			expr = iceberg.NewAnd(expr, iceberg.UnaryPredicate(iceberg.OpIsNan, iceberg.Reference(k)))
			continue
		}
		lit, ok := literal(m.table.Field(m.table.FieldIndices(k)[0]).Type, part[i])
		if !ok {
			return nil, fmt.Errorf("partition key %s: value %v (%T) has no Iceberg literal", k, part[i], part[i])
		}
		expr = iceberg.NewAnd(expr, iceberg.LiteralPredicate(iceberg.OpEQ, iceberg.Reference(k), lit))
	}
	return expr, nil
}

// keepPartition keeps the tasks of part's files (partitionFilter may
// select others): those whose partition tuple has part's values, told
// apart as fluxgate tells its partitions apart (valuesKey).
func (m *mapping) keepPartition(meta table.Metadata, tasks []table.FileScanTask, part Partition) ([]table.FileScanTask, error) {
	want := valuesKey(part)
	kept := tasks[:0]
	for _, task := range tasks {
		f := task.File
		spec := meta.PartitionSpecByID(int(f.SpecID()))
		if spec == nil {
			return nil, fmt.Errorf("lake file %s has partition spec %d, which the table lacks", f.FilePath(), f.SpecID())
		}
		of, err := m.partitionOf(spec, f.Partition())
		if err != nil {
			return nil, fmt.Errorf("lake file %s: %w", f.FilePath(), err)
		}
		if valuesKey(of) == want {
			kept = append(kept, task)
		}
	}
	return kept, nil
}

// valuesKey identifies a partition by its values as fluxgate names
// partitions: 0 and −0 apart, every NaN the same (package partition names
// them "0_0", "-0_0" and "NaN").
func valuesKey(part Partition) string {
	var b strings.Builder
	for _, v := range part {
		switch v := v.(type) {
		case float32:
			if v != v {
				v = float32(math.NaN())
			}
			fmt.Fprintf(&b, "f%x/", math.Float32bits(v))
		case float64:
			if v != v {
				v = math.NaN()
			}
			fmt.Fprintf(&b, "d%x/", math.Float64bits(v))
		default:
			fmt.Fprintf(&b, "%T%v/", v, v)
		}
	}
	return b.String()
}

func isNaN(v any) bool {
	switch v := v.(type) {
	case float32:
		return v != v
	case float64:
		return v != v
	}
	return false
}

// Partitions lists the fluxgate partitions that have data files in a
// snapshot, from its manifests alone: the lake's partitions, also those
// dropped from fluxgate since (their rows stay in the lake). The answer for
// the last snapshot asked is kept, as a snapshot never changes.
func (t *Table) Partitions(ctx context.Context, snapshotID int64) ([]Partition, error) {
	if len(t.m.parts) == 0 {
		return nil, nil
	}
	t.mu.RLock()
	known := t.parts
	t.mu.RUnlock()
	if known.snapshot == snapshotID && known.parts != nil {
		return known.parts, nil
	}
	parts, err := t.listPartitions(ctx, snapshotID)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.parts.snapshot, t.parts.parts = snapshotID, parts
	t.mu.Unlock()
	return parts, nil
}

// listPartitions reads the partitions of a snapshot's data files.
func (t *Table) listPartitions(ctx context.Context, snapshotID int64) ([]Partition, error) {
	tbl := t.current()
	snap := tbl.SnapshotByID(snapshotID)
	if snap == nil {
		return nil, fmt.Errorf("lake snapshot %d does not exist (expired or never made)", snapshotID)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("list lake manifests: %w", err)
	}
	seen := map[string]bool{}
	out := []Partition{} // not nil: known to have none
	for _, mf := range manifests {
		if mf.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		spec := tbl.Metadata().PartitionSpecByID(int(mf.PartitionSpecID()))
		if spec == nil {
			return nil, fmt.Errorf("lake manifest %s has partition spec %d, which the table lacks", mf.FilePath(), mf.PartitionSpecID())
		}
		for e, err := range mf.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("read lake manifest: %w", err)
			}
			part, err := t.m.partitionOf(spec, e.DataFile().Partition())
			if err != nil {
				return nil, fmt.Errorf("lake file %s: %w", e.DataFile().FilePath(), err)
			}
			if k := valuesKey(part); !seen[k] {
				seen[k] = true
				out = append(out, part)
			}
		}
	}
	return out, nil
}

// partitionOf reads the fluxgate partition out of a data file's partition
// tuple.
func (m *mapping) partitionOf(spec *iceberg.PartitionSpec, tuple map[int]any) (Partition, error) {
	part := make(Partition, len(m.parts))
	for i, k := range m.parts {
		id := -1
		for _, f := range spec.Fields() {
			if f.Name == k {
				id = f.FieldID
			}
		}
		if id < 0 {
			return nil, fmt.Errorf("the partition spec has no field %s", k)
		}
		v, err := rowValue(m.table.Field(m.table.FieldIndices(k)[0]).Type, tuple[id])
		if err != nil {
			return nil, fmt.Errorf("partition key %s: %w", k, err)
		}
		part[i] = v
	}
	return part, nil
}

// rowValue converts an identity partition value (Iceberg's Go form) to the
// row value of a column of type typ.
func rowValue(typ arrow.DataType, v any) (any, error) {
	if v == nil {
		return nil, fmt.Errorf("no value") // partition values are never NULL
	}
	bad := func() (any, error) { return nil, fmt.Errorf("value %v (%T) for a %s column", v, v, typ) }
	switch typ := typ.(type) {
	case *arrow.Int8Type:
		if n, ok := v.(int32); ok {
			return int8(n), nil
		}
	case *arrow.Int16Type:
		if n, ok := v.(int32); ok {
			return int16(n), nil
		}
	case *arrow.Date32Type:
		if d, ok := v.(iceberg.Date); ok {
			return arrow.Date32(d), nil
		}
	case *arrow.Time32Type:
		if us, ok := v.(iceberg.Time); ok {
			return arrow.Time32(int64(us) / unitMicros(typ.Unit)), nil
		}
	case *arrow.Time64Type:
		if us, ok := v.(iceberg.Time); ok {
			return arrow.Time64(int64(us) / unitMicros(typ.Unit)), nil
		}
	case *arrow.TimestampType:
		if us, ok := v.(iceberg.Timestamp); ok {
			return arrow.Timestamp(int64(us) / unitMicros(typ.Unit)), nil
		}
	case *arrow.FixedSizeBinaryType, *arrow.BinaryType:
		if b, ok := v.([]byte); ok {
			return b, nil
		}
	default:
		return v, nil // bool, int32, int64, float32, float64, string: the same Go type
	}
	return bad()
}

// unitMicros is the microseconds in one unit of a unit at least as coarse
// as a microsecond (the lake keeps microseconds; finer units are refused).
func unitMicros(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e6
	case arrow.Millisecond:
		return 1e3
	}
	return 1
}

// logicalTypes are the Avro logical types (by their names in the Avro
// spec) of a spec's partition fields, which a rebuilt data file must carry
// so that its partition tuple is written as iceberg-go's writer wrote it.
func logicalTypes(spec iceberg.PartitionSpec, sc *iceberg.Schema) map[int]string {
	out := map[int]string{}
	for _, f := range spec.Fields() {
		src, ok := sc.FindFieldByID(f.SourceID())
		if !ok {
			continue
		}
		switch f.Transform.ResultType(src.Type).(type) {
		case iceberg.DateType:
			out[f.FieldID] = "date"
		case iceberg.TimeType:
			out[f.FieldID] = "time-micros"
		case iceberg.TimestampType, iceberg.TimestampTzType:
			out[f.FieldID] = "timestamp-micros"
		case iceberg.DecimalType:
			out[f.FieldID] = "decimal"
		}
	}
	return out
}

// NamedPartition is a partition of a lake snapshot with its fluxgate name.
type NamedPartition struct {
	Name   string
	Values Partition
}

// NamedPartitions lists the partitions of a snapshot (Partitions) with the
// names fluxgate gives them (package partition), in name order: how reads
// match a lake partition to a fluxgate one (info is the table's definition).
func (t *Table) NamedPartitions(ctx context.Context, snapshotID int64, info *catalog.TableInfo) ([]NamedPartition, error) {
	parts, err := t.Partitions(ctx, snapshotID)
	if err != nil {
		return nil, err
	}
	out := make([]NamedPartition, 0, len(parts))
	for _, p := range parts {
		name, err := partitionName(info, p)
		if err != nil {
			return nil, err
		}
		out = append(out, NamedPartition{Name: name, Values: p})
	}
	slices.SortFunc(out, func(a, b NamedPartition) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// partitionName names a lake partition as a row of its values names its
// partition (package partition).
func partitionName(info *catalog.TableInfo, p Partition) (string, error) {
	values := make([]string, len(p))
	for i, k := range info.PartitionKeyIndexes() {
		f := info.ArrowSchema().Field(k)
		b := array.NewBuilder(memory.DefaultAllocator, f.Type)
		row.Append(b, p[i])
		arr := b.NewArray()
		b.Release()
		v, err := partition.ValueString(f.Name, arr, 0)
		arr.Release()
		if err != nil {
			return "", err
		}
		values[i] = v
	}
	return partition.Name(values), nil
}
