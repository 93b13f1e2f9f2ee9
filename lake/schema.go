package lake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// The system columns every lake table ends with: protocol's.
const (
	ColBucket    = protocol.ColBucket
	ColOffset    = protocol.ColOffset
	ColTimestamp = protocol.ColTimestamp
)

// SystemFields are the system columns as Arrow fields, in their order.
var SystemFields = []arrow.Field{
	{Name: ColBucket, Type: arrow.PrimitiveTypes.Int32},
	{Name: ColOffset, Type: arrow.PrimitiveTypes.Int64},
	{Name: ColTimestamp, Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}

// Snapshot summary and table property keys.
const (
	PropOffsets    = "fluxgate.offsets"
	PropTableID    = "fluxgate.table-id"
	PropCommitUser = "commit-user"
	CommitUser     = "fluxgate-tiering"
)

// firstPartitionFieldID is where Iceberg numbers partition fields from.
const firstPartitionFieldID = 1000

// mapping is how one fluxgate table maps to its Iceberg table.
type mapping struct {
	table  *arrow.Schema // the fluxgate table's columns
	lake   *arrow.Schema // the lake's columns: table columns in lake types, then SystemFields
	schema *iceberg.Schema
	spec   iceberg.PartitionSpec
	props  iceberg.Properties
	keys   []string // the primary key's columns; nil for log tables
	parts  []string // the partition keys; nil for tables without partitions
	keyIDs []int    // their Iceberg field ids
}

// bind makes m refer to the Iceberg table as it is: its schema, field ids and
// partition spec (which differ from a fresh mapping's once columns were
// added).
func (m *mapping) bind(sc *iceberg.Schema, spec iceberg.PartitionSpec) {
	m.schema, m.spec, m.keyIDs = sc, spec, nil
	for _, k := range m.keys {
		m.keyIDs = append(m.keyIDs, m.fieldID(k))
	}
}

// Check reports why a table cannot be tiered into Iceberg, as a
// FAILED_PRECONDITION error that names the column, or nil.
func Check(info *catalog.TableInfo) error {
	_, err := newMapping(info)
	return err
}

func newMapping(info *catalog.TableInfo) (*mapping, error) {
	m := &mapping{table: info.ArrowSchema()}
	fields := make([]arrow.Field, 0, m.table.NumFields()+len(SystemFields))
	for _, f := range m.table.Fields() {
		lt, err := lakeType(f.Type)
		if err != nil {
			return nil, errs.New(errs.FailedPrecondition, "%s cannot be tiered into Iceberg: column %s: %v", info.Path(), f.Name, err)
		}
		fields = append(fields, arrow.Field{Name: f.Name, Type: lt, Nullable: f.Nullable})
	}
	fields = append(fields, SystemFields...)
	m.lake = arrow.NewSchema(fields, nil)
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(m.lake, false)
	if err != nil {
		return nil, errs.New(errs.FailedPrecondition, "%s cannot be tiered into Iceberg: %v", info.Path(), err)
	}
	idOf := func(name string) int {
		f, _ := sc.FindFieldByName(name)
		return f.ID
	}
	cols := slices.Clone(sc.Fields())
	for i := range cols {
		if slices.ContainsFunc(SystemFields, func(f arrow.Field) bool { return f.Name == cols[i].Name }) {
			cols[i].Required = true
		}
	}
	for _, k := range info.PrimaryKeyIndexes() {
		f := m.table.Field(k)
		switch f.Type.ID() {
		case arrow.FLOAT32, arrow.FLOAT64:
			return nil, errs.New(errs.FailedPrecondition, "%s cannot be tiered into Iceberg: primary-key column %s is %s, and Iceberg cannot use floating-point columns as identifier fields or equality-delete keys", info.Path(), f.Name, f.Type)
		}
		m.keys = append(m.keys, f.Name)
		m.keyIDs = append(m.keyIDs, idOf(f.Name))
	}
	m.schema = iceberg.NewSchemaWithIdentifiers(0, m.keyIDs, cols...)

	m.parts = info.PartitionKeys
	pfields, err := partitionFields(m)
	if err != nil {
		return nil, errs.New(errs.FailedPrecondition, "%s cannot be tiered into Iceberg: %v", info.Path(), err)
	}
	// The bucket field comes last, after the partition keys' fields.
	bucketFieldID := firstPartitionFieldID + len(pfields)
	var part iceberg.PartitionField
	if key := info.BucketKeyIndexes(); len(key) == 1 {
		f := m.table.Field(key[0])
		switch f.Type.ID() {
		case arrow.BOOL, arrow.FLOAT32, arrow.FLOAT64:
			return nil, errs.New(errs.FailedPrecondition, "%s cannot be tiered into Iceberg: its bucket key %s is %s, which Iceberg's bucket transform does not accept; choose another bucket.key", info.Path(), f.Name, f.Type)
		}
		part = iceberg.PartitionField{SourceIDs: []int{idOf(f.Name)}, FieldID: bucketFieldID,
			Name: f.Name + "_bucket", Transform: iceberg.BucketTransform{NumBuckets: info.BucketCount()}}
	} else {
		part = iceberg.PartitionField{SourceIDs: []int{idOf(ColBucket)}, FieldID: bucketFieldID,
			Name: ColBucket, Transform: iceberg.IdentityTransform{}}
	}
	m.spec = iceberg.NewPartitionSpec(append(pfields, part)...)

	// Pass-through properties first, so that they cannot change what the
	// tiering relies on.
	// Old metadata files go after each commit (the last
	// write.metadata.previous-versions-max stay), unless set otherwise.
	m.props = iceberg.Properties{table.MetadataDeleteAfterCommitEnabledKey: "true"}
	for k, v := range info.Options {
		if name, ok := strings.CutPrefix(k, catalog.LakeOptionPrefix); ok {
			m.props[name] = v
		}
	}
	m.props["format-version"] = "2"
	m.props[PropTableID] = strconv.FormatInt(info.TableID, 10)
	if info.IsPrimaryKey() {
		for _, k := range []string{table.WriteDeleteModeKey, "write.update.mode", "write.merge.mode"} {
			m.props[k] = table.WriteModeMergeOnRead
		}
	}
	return m, nil
}

// lakeType is the Arrow type a column has in the lake: Iceberg has no 8- or
// 16-bit integers and keeps times and timestamps in microseconds.
func lakeType(t arrow.DataType) (arrow.DataType, error) {
	switch t := t.(type) {
	case *arrow.Int8Type, *arrow.Int16Type:
		return arrow.PrimitiveTypes.Int32, nil
	case *arrow.Time32Type:
		return arrow.FixedWidthTypes.Time64us, nil
	case *arrow.Time64Type:
		if t.Unit == arrow.Nanosecond {
			return nil, fmt.Errorf("TIME(9) has nanoseconds and Iceberg keeps microseconds; use TIME(6) or less")
		}
		return t, nil
	case *arrow.TimestampType:
		if t.Unit == arrow.Nanosecond {
			return nil, fmt.Errorf("a timestamp with precision above 6 has nanoseconds and Iceberg (format version 2) keeps microseconds; use precision 6 or less")
		}
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: t.TimeZone}, nil
	case *arrow.ListType:
		e, err := lakeType(t.Elem())
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: e, Nullable: t.ElemField().Nullable}), nil
	case *arrow.MapType:
		k, err := lakeType(t.KeyType())
		if err != nil {
			return nil, err
		}
		v, err := lakeType(t.ItemType())
		if err != nil {
			return nil, err
		}
		return arrow.MapOfFields(arrow.Field{Name: "key", Type: k}, arrow.Field{Name: "value", Type: v, Nullable: t.ItemField().Nullable}), nil
	case *arrow.StructType:
		fields := make([]arrow.Field, t.NumFields())
		for i, f := range t.Fields() {
			ft, err := lakeType(f.Type)
			if err != nil {
				return nil, err
			}
			fields[i] = arrow.Field{Name: f.Name, Type: ft, Nullable: f.Nullable}
		}
		return arrow.StructOf(fields...), nil
	}
	return t, nil
}
