package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/autopartition"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/sqltype"
)

// The wire forms of a table definition (package protocol); the catalog
// stores them as they are.
type (
	Column    = protocol.Column
	TableSpec = protocol.TableSpec
	Index     = protocol.Index
)

// Table kinds and index names.
const (
	KindLog        = protocol.KindLog
	KindPrimaryKey = protocol.KindPrimaryKey

	IndexPrimaryKey = protocol.IndexPrimaryKey
	IndexPrefix     = protocol.IndexPrefix
)

// TableInfo is a stored table definition: the wire TableInfo (the normalized
// spec with canonical types, explicit nullability and every defaulted option
// filled in, plus what the catalog assigned) and the state derived from it,
// which is why it is its own type. It marshals flat, as PROTOCOL.md §3 shows.
// A *TableInfo handed out by this package is immutable and safe for
// concurrent readers; callers must not modify it or the slices and maps it
// returns.
type TableInfo struct {
	protocol.TableInfo

	d derived
}

// derived is computed from the exported fields by init.
type derived struct {
	path         protocol.TablePath
	schema       *arrow.Schema
	colIndex     map[string]int
	pkIdx        []int
	keyIdx       []int // of the primary key without the partition keys
	partIdx      []int
	bucketKey    []string
	bucketKeyIdx []int
	buckets      int
	ttl          time.Duration
	freshness    time.Duration
	zstdLevel    int
	autoIncCache int64
	prefixIndex  bool
	partition    *Partition // of a partition's definition (ForPartition)
}

// Defaults are server-wide defaults for options a spec leaves out.
type Defaults struct {
	BucketNum int // 0 means DefaultBucketNum
}

// DefaultBucketNum is bucket.num where neither the spec nor the server sets
// it: the default of fluxgate serve --default-bucket-num.
const DefaultBucketNum = 1

func (t *TableInfo) Path() protocol.TablePath   { return t.d.path }
func (t *TableInfo) ArrowSchema() *arrow.Schema { return t.d.schema }
func (t *TableInfo) IsPrimaryKey() bool         { return t.Kind == KindPrimaryKey }
func (t *TableInfo) BucketCount() int           { return t.d.buckets }

// BucketKey is the bucket key; empty for a log table without one, which
// spreads rows round-robin.
func (t *TableInfo) BucketKey() []string      { return t.d.bucketKey }
func (t *TableInfo) BucketKeyIndexes() []int  { return t.d.bucketKeyIdx }
func (t *TableInfo) PrimaryKeyIndexes() []int { return t.d.pkIdx }

// PhysicalKeyIndexes are the primary key's columns without the partition
// keys: what identifies a row inside its partition (Fluss's physical primary
// key). The whole primary key on a table that is not partitioned.
func (t *TableInfo) PhysicalKeyIndexes() []int { return t.d.keyIdx }

// IsPartitioned reports whether the table has partition keys.
func (t *TableInfo) IsPartitioned() bool { return len(t.PartitionKeys) > 0 }

// PartitionKeyIndexes are the positions of the partition keys, in key order.
func (t *TableInfo) PartitionKeyIndexes() []int    { return t.d.partIdx }
func (t *TableInfo) HasPrefixIndex() bool          { return t.d.prefixIndex }
func (t *TableInfo) Option(key string) string      { return t.Options[key] }
func (t *TableInfo) LogTTL() time.Duration         { return t.d.ttl } // 0: keep forever
func (t *TableInfo) Freshness() time.Duration      { return t.d.freshness }
func (t *TableInfo) Compression() string           { return t.Options[OptCompressionType] }
func (t *TableInfo) ZstdLevel() int                { return t.d.zstdLevel }
func (t *TableInfo) DatalakeEnabled() bool         { return t.Options[OptDatalakeEnabled] == "true" }
func (t *TableInfo) MergeEngine() string           { return t.Options[OptMergeEngine] } // "" = last row
func (t *TableInfo) DeleteBehavior() string        { return t.Options[OptDeleteBehavior] }
func (t *TableInfo) ChangelogImage() string        { return t.Options[OptChangelogImage] }
func (t *TableInfo) VersionColumn() string         { return t.Options[OptVersionColumn] }
func (t *TableInfo) AutoIncrementColumn() string   { return t.Options[OptAutoIncrementFields] }
func (t *TableInfo) AutoIncrementCacheSize() int64 { return t.d.autoIncCache }

// UnmarshalJSON decodes a stored or received TableInfo and computes its
// derived state, so that the accessors work on it.
func (t *TableInfo) UnmarshalJSON(b []byte) error {
	type plain TableInfo // without this method
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	return t.init()
}

// ColumnIndex returns the position of a column, or -1.
func (t *TableInfo) ColumnIndex(name string) int {
	if i, ok := t.d.colIndex[name]; ok {
		return i
	}
	return -1
}

// AggFunction returns a column's aggregate function on an aggregation table,
// "" for key columns and other tables.
func (t *TableInfo) AggFunction(col string) string { return t.Options["fields."+col+".agg"] }

// AggDelimiter returns the delimiter of a listagg or string_agg column.
func (t *TableInfo) AggDelimiter(col string) string {
	if d := t.Options["fields."+col+"."+t.AggFunction(col)+".delimiter"]; d != "" {
		return d
	}
	return DefaultDelimiter
}

// NormalizeSpec validates a table definition by Fluss's rules and returns it
// as it would be stored, without the catalog-assigned id, schema id and time.
func NormalizeSpec(spec TableSpec, defaults Defaults) (*TableInfo, error) {
	path, err := protocol.ParseTablePath(spec.Table)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.InvalidArgument, "table %s: cannot create a table with a view suffix; create %s", path.FullName(), path)
	}
	n := &normalizer{table: path.String(), types: map[string]*sqltype.Type{}, opts: map[string]string{}}
	if len(spec.Columns) == 0 {
		return nil, errs.New(errs.InvalidArgument, "table %s: a table needs at least one column", n.table)
	}
	if err := checkComment(n.table, "comment", spec.Comment); err != nil {
		return nil, err
	}
	for _, c := range spec.Columns {
		if err := n.addColumn(c); err != nil {
			return nil, err
		}
	}
	if err := n.primaryKey(spec.PrimaryKey); err != nil {
		return nil, err
	}
	if err := n.partitionKeys(spec.PartitionKeys); err != nil {
		return nil, err
	}
	if err := n.options(spec.Options, defaults); err != nil {
		return nil, err
	}
	if err := n.autoPartition(n.partKeys); err != nil {
		return nil, err
	}
	info := &TableInfo{TableInfo: protocol.TableInfo{
		TableSpec: TableSpec{Table: n.table, Columns: n.cols, PrimaryKey: n.pk, PartitionKeys: n.partKeys,
			Options: n.opts, Comment: spec.Comment},
		Kind:    KindLog,
		Indexes: []Index{},
	}}
	if len(n.pk) > 0 {
		info.Kind = KindPrimaryKey
		info.Indexes = append(info.Indexes, Index{Name: IndexPrimaryKey, Columns: n.pk})
		if bk := splitList(n.opts[OptBucketKey]); isStrictPrefix(bk, n.physicalKey()) {
			info.Indexes = append(info.Indexes, Index{Name: IndexPrefix, Columns: bk})
		}
	}
	if err := info.init(); err != nil {
		return nil, err
	}
	if err := checkDefinitionSize(info); err != nil {
		return nil, err
	}
	return info, nil
}

// ValidateAlter applies an alter-table request to a table definition and
// returns the new definition. Only the options in PROTOCOL.md §3 may be set or
// reset (reset restores the default); added columns must be nullable and go
// last, and adding any gives the table a new schema id.
func ValidateAlter(info *TableInfo, set map[string]string, reset []string, addColumns []Column) (*TableInfo, error) {
	table := info.Table
	opts := maps.Clone(info.Options)
	if opts == nil {
		opts = map[string]string{}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if err := checkOptionSize(table, k, set[k]); err != nil {
			return nil, err
		}
		if !alterable[k] {
			return nil, notAlterable(table, k)
		}
		v, err := parseOption(table, k, set[k])
		if err != nil {
			return nil, err
		}
		opts[k] = v
	}
	for _, k := range reset {
		if err := checkOptionSize(table, k, ""); err != nil {
			return nil, err
		}
		if !alterable[k] {
			return nil, notAlterable(table, k)
		}
		if _, ok := set[k]; ok {
			return nil, errs.New(errs.InvalidArgument, "table %s: option %s is both set and reset", table, errs.Quote(k))
		}
		if autopartition.IsOption(k) {
			delete(opts, k) // autoPartition fills the default in again
		} else {
			opts[k] = optionDefaults[k]
		}
	}
	n := &normalizer{table: table, types: map[string]*sqltype.Type{}, opts: opts}
	for _, c := range info.Columns {
		n.colNames = append(n.colNames, c.Name)
		n.types[c.Name] = info.columnType(c.Name)
	}
	n.cols = slices.Clone(info.Columns)
	if err := n.autoPartition(info.PartitionKeys); err != nil {
		return nil, err
	}
	for _, c := range addColumns {
		if c.Nullable != nil && !*c.Nullable {
			return nil, errs.New(errs.InvalidArgument, "table %s: added column %s must be nullable", table, errs.Quote(c.Name))
		}
		if err := n.addColumn(c); err != nil {
			return nil, err
		}
		if opts[OptMergeEngine] == MergeAggregation {
			opts["fields."+c.Name+".agg"] = AggDefault
		}
	}
	out := &TableInfo{TableInfo: info.TableInfo}
	out.Columns, out.Options = n.cols, opts
	if len(addColumns) > 0 {
		out.SchemaID++
	}
	if err := out.init(); err != nil {
		return nil, err
	}
	if err := checkDefinitionSize(out); err != nil {
		return nil, err
	}
	return out, nil
}

func notAlterable(table, key string) error {
	return errs.New(errs.InvalidArgument, "table %s: option %q cannot be altered (only %s can)",
		table, key, strings.Join(slices.Sorted(maps.Keys(alterable)), ", "))
}

// normalizer accumulates a definition being validated.
type normalizer struct {
	table    string
	cols     []Column
	colNames []string
	types    map[string]*sqltype.Type
	pk       []string
	partKeys []string
	opts     map[string]string
}

func (n *normalizer) addColumn(c Column) error {
	switch {
	case c.Name == "" || len(c.Name) > protocol.MaxNameLen:
		return errs.New(errs.InvalidArgument, "table %s: column name %s is %d bytes long; it must be 1 to %d", n.table, errs.Quote(c.Name), len(c.Name), protocol.MaxNameLen)
	case strings.TrimSpace(c.Name) != c.Name || strings.ContainsAny(c.Name, ",\x00\n\r\t"):
		return errs.New(errs.InvalidArgument, "table %s: column name %s may not contain commas or control characters, nor start or end with a space", n.table, errs.Quote(c.Name))
	case slices.Contains(protocol.SystemColumns, c.Name):
		return errs.New(errs.InvalidArgument, "table %s: column name %s is reserved for a system column", n.table, errs.Quote(c.Name))
	case n.types[c.Name] != nil:
		return errs.New(errs.InvalidArgument, "table %s: duplicate column %s", n.table, errs.Quote(c.Name))
	}
	if err := checkComment(n.table, fmt.Sprintf("column %s comment", errs.Quote(c.Name)), c.Comment); err != nil {
		return err
	}
	t, err := parseType(c.Type)
	if err != nil {
		return errs.New(errs.InvalidArgument, "table %s: column %s: %w", n.table, errs.Quote(c.Name), err)
	}
	nullable := c.Nullable == nil || *c.Nullable
	c.Type, c.Nullable = t.String(), &nullable
	n.cols = append(n.cols, c)
	n.colNames = append(n.colNames, c.Name)
	n.types[c.Name] = t
	return nil
}

func (n *normalizer) primaryKey(pk []string) error {
	for _, k := range pk {
		t := n.types[k]
		switch {
		case t == nil:
			return errs.New(errs.InvalidArgument, "table %s: primary key column %s is not a column (columns: %s)", n.table, errs.Quote(k), strings.Join(n.colNames, ", "))
		case slices.Contains(n.pk, k):
			return errs.New(errs.InvalidArgument, "table %s: primary key column %s is listed twice", n.table, errs.Quote(k))
		case t.Nested():
			return errs.New(errs.InvalidArgument, "table %s: primary key column %s has type %s; ARRAY, MAP and ROW cannot be keys", n.table, errs.Quote(k), t.String())
		}
		n.pk = append(n.pk, k)
		notNull := false
		n.cols[slices.Index(n.colNames, k)].Nullable = &notNull // Fluss forces key columns NOT NULL
	}
	return nil
}

// options validates the options (each on its own, then with each other and
// the columns) and fills in the defaults.
func (n *normalizer) options(in map[string]string, d Defaults) error {
	var aggs []string // columns named by fields.<col>.* keys, checked after the engine
	for _, k := range slices.Sorted(maps.Keys(in)) {
		v := in[k]
		if err := checkOptionSize(n.table, k, v); err != nil {
			return err
		}
		if strings.HasPrefix(k, LakeOptionPrefix) {
			n.opts[k] = v
			continue
		}
		if col, fn, ok := aggOption(k); ok {
			if fn == "" {
				v = normalizeAggFunction(v)
			}
			n.opts[k] = v
			aggs = append(aggs, col)
			continue
		}
		v, err := parseOption(n.table, k, v)
		if err != nil {
			return err
		}
		n.opts[k] = v
	}
	pkTable := len(n.pk) > 0
	for _, k := range []string{OptMergeEngine, OptDeleteBehavior, OptChangelogImage, OptAutoIncrementFields} {
		if _, ok := n.opts[k]; ok && !pkTable {
			return errs.New(errs.InvalidArgument, "table %s: option %s applies only to primary-key tables", n.table, errs.Quote(k))
		}
	}
	checks := []func() error{n.bucketKey, n.mergeEngine, n.autoIncrement}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	for _, col := range aggs {
		if err := n.aggColumn(col); err != nil {
			return err
		}
	}
	n.fillDefaults(d)
	return nil
}

func (n *normalizer) bucketKey() error {
	v, ok := n.opts[OptBucketKey]
	if !ok {
		return nil
	}
	var seen []string
	for _, k := range splitList(v) {
		t := n.types[k]
		switch {
		case t == nil:
			return n.badOption(OptBucketKey, "%s", n.noColumn(k))
		case slices.Contains(seen, k):
			return n.badOption(OptBucketKey, "column %s is listed twice", errs.Quote(k))
		case t.Nested():
			return n.badOption(OptBucketKey, "column %s has type %s; ARRAY, MAP and ROW cannot be keys", errs.Quote(k), t.String())
		case slices.Contains(n.partKeys, k):
			return errs.New(errs.InvalidArgument, "table %s: Bucket key %s shouldn't include any column in partition keys %s.",
				n.table, javaList(splitList(v)), javaList(n.partKeys))
		case len(n.pk) > 0 && !slices.Contains(n.pk, k):
			return n.badOption(OptBucketKey, "column %s is not in the primary key %s; the bucket key of a primary-key table must be a subset of it", errs.Quote(k), strings.Join(n.pk, ","))
		}
		seen = append(seen, k)
	}
	return nil
}

func (n *normalizer) mergeEngine() error {
	engine := n.opts[OptMergeEngine]
	ver, hasVer := n.opts[OptVersionColumn]
	switch {
	case engine == MergeVersioned && !hasVer:
		return errs.New(errs.InvalidArgument, "table %s: option %s is required when %s is versioned", n.table, errs.Quote(OptVersionColumn), OptMergeEngine)
	case engine != MergeVersioned && hasVer:
		return n.badOption(OptVersionColumn, "applies only when %s is versioned", OptMergeEngine)
	case hasVer:
		t := n.types[ver]
		switch {
		case t == nil:
			return n.badOption(OptVersionColumn, "%s", n.noColumn(ver))
		case slices.Contains(n.pk, ver):
			return n.badOption(OptVersionColumn, "column %s is in the primary key", errs.Quote(ver))
		case !isRoot("INT", "BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ")(t):
			return n.badOption(OptVersionColumn, "column %s has type %s; expected INT, BIGINT, TIMESTAMP or TIMESTAMP_LTZ", errs.Quote(ver), t.String())
		}
	}
	if engine != "" && n.opts[OptDeleteBehavior] == DeleteAllow && engine != MergeAggregation {
		return n.badOption(OptDeleteBehavior, "%s tables do not support allow; expected ignore or disable", engine)
	}
	if engine == MergeAggregation && n.opts[OptChangelogImage] == ChangelogWAL {
		return n.badOption(OptChangelogImage, "aggregation tables need the full changelog image (undo depends on it)")
	}
	return nil
}

func (n *normalizer) autoIncrement() error {
	col, ok := n.opts[OptAutoIncrementFields]
	if !ok {
		if _, ok := n.opts[OptAutoIncrementCacheSize]; ok {
			return n.badOption(OptAutoIncrementCacheSize, "applies only to tables with %s", OptAutoIncrementFields)
		}
		return nil
	}
	t := n.types[col]
	switch {
	case strings.Contains(col, ","):
		return n.badOption(OptAutoIncrementFields, "expected exactly one column")
	case t == nil:
		return n.badOption(OptAutoIncrementFields, "%s", n.noColumn(col))
	case slices.Contains(n.pk, col):
		return n.badOption(OptAutoIncrementFields, "column %s is in the primary key", errs.Quote(col))
	case t.Root() != "INT" && t.Root() != "BIGINT":
		return n.badOption(OptAutoIncrementFields, "column %s has type %s; expected INT or BIGINT", errs.Quote(col), t.String())
	}
	return nil
}

func (n *normalizer) aggColumn(col string) error {
	key := "fields." + col + ".agg"
	if n.opts[OptMergeEngine] != MergeAggregation {
		return errs.New(errs.InvalidArgument, "table %s: option %s: aggregate functions apply only when %s is aggregation", n.table, errs.Quote("fields."+col+".*"), OptMergeEngine)
	}
	t := n.types[col]
	switch {
	case t == nil:
		return errs.New(errs.InvalidArgument, "table %s: option %s: %s", n.table, errs.Quote("fields."+col+".*"), n.noColumn(col))
	case slices.Contains(n.pk, col):
		return errs.New(errs.InvalidArgument, "table %s: option %s: primary key column %s cannot have an aggregate function", n.table, errs.Quote("fields."+col+".*"), errs.Quote(col))
	}
	fn, ok := n.opts[key]
	if ok {
		accepts := aggFunctions[fn]
		if accepts == nil {
			return n.badOption(key, "unknown aggregate function; expected one of %s", aggFunctionNames())
		}
		if !accepts(t) {
			return n.badOption(key, "%s does not accept column %s of type %s; expected %s", fn, errs.Quote(col), t.String(), aggTypeNames[fn])
		}
	}
	for _, dfn := range []string{"listagg", "string_agg"} {
		dkey := "fields." + col + "." + dfn + ".delimiter"
		d, ok := n.opts[dkey]
		switch {
		case !ok:
		case fn != dfn:
			return n.badOption(dkey, "applies only when %s is %s", key, dfn)
		case d == "":
			return n.badOption(dkey, "expected a non-empty delimiter")
		}
	}
	return nil
}

func (n *normalizer) fillDefaults(d Defaults) {
	setDefault := func(k, v string) {
		if _, ok := n.opts[k]; !ok {
			n.opts[k] = v
		}
	}
	if d.BucketNum <= 0 {
		d.BucketNum = DefaultBucketNum
	}
	setDefault(OptBucketNum, strconv.Itoa(d.BucketNum))
	for _, k := range []string{OptLogTTL, OptCompressionType, OptDatalakeEnabled, OptDatalakeFreshness} {
		setDefault(k, optionDefaults[k])
	}
	if n.opts[OptCompressionType] == CompressionZstd {
		setDefault(OptZstdLevel, optionDefaults[OptZstdLevel])
	}
	if _, ok := n.opts[OptAutoIncrementFields]; ok {
		setDefault(OptAutoIncrementCacheSize, optionDefaults[OptAutoIncrementCacheSize])
	}
	if len(n.pk) == 0 {
		return
	}
	setDefault(OptBucketKey, strings.Join(n.physicalKey(), ","))
	setDefault(OptChangelogImage, ChangelogFull)
	if n.opts[OptMergeEngine] == "" {
		setDefault(OptDeleteBehavior, DeleteAllow)
	} else {
		setDefault(OptDeleteBehavior, DeleteIgnore)
	}
	if n.opts[OptMergeEngine] == MergeAggregation {
		for _, c := range n.colNames {
			if !slices.Contains(n.pk, c) {
				setDefault("fields."+c+".agg", AggDefault)
			}
		}
	}
}

// noColumn says that the table has no column name, and which it has.
func (n *normalizer) noColumn(name string) string {
	return fmt.Sprintf("column %s does not exist (columns: %s)", errs.Quote(name), strings.Join(n.colNames, ", "))
}

func (n *normalizer) badOption(key, format string, args ...any) error {
	return errs.New(errs.InvalidArgument, "table %s: option %s = %s: %s", n.table, errs.Quote(key), errs.Quote(n.opts[key]), fmt.Sprintf(format, args...))
}

func isStrictPrefix(prefix, of []string) bool {
	return len(prefix) < len(of) && slices.Equal(prefix, of[:len(prefix)])
}

// init computes the derived fields of a normalized definition; an error means
// a stored definition is corrupt.
func (t *TableInfo) init() error {
	var d derived
	var err error
	if d.path, err = protocol.ParseTablePath(t.Table); err != nil {
		return err
	}
	if d.schema, err = arrowSchema(t.Columns); err != nil {
		return fmt.Errorf("table %s: %w", t.Table, err)
	}
	d.colIndex = make(map[string]int, len(t.Columns))
	for i, c := range t.Columns {
		d.colIndex[c.Name] = i
	}
	if d.pkIdx, err = t.indexesOf(d.colIndex, t.PrimaryKey); err != nil {
		return err
	}
	if d.partIdx, err = t.indexesOf(d.colIndex, t.PartitionKeys); err != nil {
		return err
	}
	for _, i := range d.pkIdx {
		if !slices.Contains(d.partIdx, i) {
			d.keyIdx = append(d.keyIdx, i)
		}
	}
	if bk := t.Options[OptBucketKey]; bk != "" {
		d.bucketKey = splitList(bk)
	}
	if d.bucketKeyIdx, err = t.indexesOf(d.colIndex, d.bucketKey); err != nil {
		return err
	}
	d.prefixIndex = slices.ContainsFunc(t.Indexes, func(ix Index) bool { return ix.Name == IndexPrefix })
	ints := map[string]*int{OptBucketNum: &d.buckets, OptZstdLevel: &d.zstdLevel}
	for k, p := range ints {
		if v, ok := t.Options[k]; ok {
			if *p, err = strconv.Atoi(v); err != nil {
				return fmt.Errorf("table %s: option %s: %w", t.Table, k, err)
			}
		}
	}
	if v, ok := t.Options[OptAutoIncrementCacheSize]; ok {
		if d.autoIncCache, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("table %s: option %s: %w", t.Table, OptAutoIncrementCacheSize, err)
		}
	}
	durations := map[string]*time.Duration{OptLogTTL: &d.ttl, OptDatalakeFreshness: &d.freshness}
	for k, p := range durations {
		if *p, err = ParseDuration(t.Options[k]); err != nil {
			return fmt.Errorf("table %s: option %s: %w", t.Table, k, err)
		}
	}
	t.d = d
	return nil
}

// arrowSchema is the Arrow schema of stored (canonical) columns.
func arrowSchema(cols []Column) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		dt, err := ParseType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", errs.Quote(c.Name), err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: c.Nullable == nil || *c.Nullable}
	}
	return arrow.NewSchema(fields, nil), nil
}

func (t *TableInfo) indexesOf(colIndex map[string]int, names []string) ([]int, error) {
	idx := make([]int, len(names))
	for i, name := range names {
		j, ok := colIndex[name]
		if !ok {
			return nil, fmt.Errorf("table %s: key column %s is not a column", t.Table, errs.Quote(name))
		}
		idx[i] = j
	}
	return idx, nil
}

// columnType re-parses a stored column's canonical type.
func (t *TableInfo) columnType(name string) *sqltype.Type {
	st, _ := parseType(t.Columns[t.ColumnIndex(name)].Type)
	return st
}
