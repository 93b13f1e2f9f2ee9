package catalog

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// testColumns covers every type family the option rules care about.
var testColumns = []Column{
	{Name: "k", Type: "BIGINT"}, {Name: "k2", Type: "STRING"}, {Name: "v", Type: "INT"},
	{Name: "s", Type: "STRING"}, {Name: "ts", Type: "TIMESTAMP(3)"}, {Name: "ltz", Type: "TIMESTAMP_LTZ(3)"},
	{Name: "b", Type: "BOOLEAN"}, {Name: "bin", Type: "BYTES"}, {Name: "vb", Type: "VARBINARY(8)"},
	{Name: "fixed", Type: "BINARY(4)"}, {Name: "d", Type: "DECIMAL(10,2)"}, {Name: "f", Type: "DOUBLE"},
	{Name: "arr", Type: "ARRAY<INT>"}, {Name: "c", Type: "CHAR(2)"}, {Name: "dt", Type: "DATE"},
	{Name: "vc", Type: "VARCHAR(10)"}, {Name: "tm", Type: "TIME(3)"},
}

var pk = []string{"k", "k2"}

func testSpec(pk []string, opts map[string]string) TableSpec {
	return TableSpec{Table: "db.t", Columns: slices.Clone(testColumns), PrimaryKey: pk, Options: opts}
}

func agg(kv ...string) map[string]string {
	m := map[string]string{OptMergeEngine: "aggregation"}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestOptionValidation(t *testing.T) {
	type o = map[string]string
	good := []struct {
		name string
		pk   []string
		opts o
	}{
		{"bucket.num", nil, o{"bucket.num": "4"}},
		{"bucket.num max", pk, o{"bucket.num": " 4096 "}},
		{"log bucket.key", nil, o{"bucket.key": "v"}},
		{"log bucket.key list", nil, o{"bucket.key": "k, s"}},
		{"pk bucket.key subset", pk, o{"bucket.key": "k2"}},
		{"first_row", pk, o{"table.merge-engine": "FIRST_ROW"}},
		{"first_row disable", pk, o{"table.merge-engine": "first_row", "table.delete.behavior": "disable"}},
		{"versioned int", pk, o{"table.merge-engine": "versioned", "table.merge-engine.versioned.ver-column": "v"}},
		{"versioned timestamp", pk, o{"table.merge-engine": "Versioned", "table.merge-engine.versioned.ver-column": "ts"}},
		{"versioned ltz", pk, o{"table.merge-engine": "versioned", "table.merge-engine.versioned.ver-column": "ltz"}},
		{"aggregation defaults", pk, agg()},
		{"aggregation allow", pk, agg("table.delete.behavior", "allow")},
		{"sum int", pk, agg("fields.v.agg", "sum")},
		{"sum decimal", pk, agg("fields.d.agg", "SUM")},
		{"product double", pk, agg("fields.f.agg", "product")},
		{"max string", pk, agg("fields.s.agg", "max")},
		{"max time", pk, agg("fields.tm.agg", "max")},
		{"min date", pk, agg("fields.dt.agg", "min")},
		{"min ltz", pk, agg("fields.ltz.agg", "min")},
		{"listagg", pk, agg("fields.s.agg", "listagg", "fields.s.listagg.delimiter", "|")},
		{"listagg char", pk, agg("fields.c.agg", "listagg")},
		{"string_agg varchar", pk, agg("fields.vc.agg", "string_agg", "fields.vc.string_agg.delimiter", ";")},
		{"bool_and", pk, agg("fields.b.agg", "bool_and")},
		{"bool_or", pk, agg("fields.b.agg", "bool_or")},
		{"rbm32", pk, agg("fields.bin.agg", "rbm32")},
		{"rbm64 varbinary", pk, agg("fields.vb.agg", "rbm64")},
		{"last_value any", pk, agg("fields.arr.agg", "last_value")},
		{"dashes", pk, agg("fields.arr.agg", "Last-Value-Ignore-Nulls")},
		{"first_value", pk, agg("fields.arr.agg", "first_value", "fields.b.agg", "first_value_ignore_nulls")},
		{"delete disable", pk, o{"table.delete.behavior": "DISABLE"}},
		{"delete ignore", pk, o{"table.delete.behavior": "ignore"}},
		{"delete allow", pk, o{"table.delete.behavior": "allow"}},
		{"wal", pk, o{"table.changelog.image": "WAL"}},
		{"auto-increment", pk, o{"auto-increment.fields": "v", "table.auto-increment.cache-size": "10"}},
		{"ttl 0", nil, o{"table.log.ttl": "0ms"}},
		{"ttl days", nil, o{"table.log.ttl": "30 d"}},
		{"ttl no unit", nil, o{"table.log.ttl": "1000"}},
		{"compression none", nil, o{"table.log.arrow.compression.type": "none"}},
		{"compression lz4", nil, o{"table.log.arrow.compression.type": "LZ4_FRAME"}},
		{"zstd level", nil, o{"table.log.arrow.compression.zstd.level": "22"}},
		{"datalake", pk, o{"table.datalake.enabled": "TRUE", "table.datalake.format": "Iceberg", "table.datalake.freshness": "30s"}},
		{"iceberg pass-through", nil, o{"iceberg.write.format.default": "parquet"}},
	}
	for _, tt := range good {
		if _, err := NormalizeSpec(testSpec(tt.pk, tt.opts), Defaults{}); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}

	bad := []struct {
		name string
		pk   []string
		opts o
		key  string // the option the message must name
	}{
		{"unknown", nil, o{"table.foo": "1"}, "table.foo"},
		{"unknown non-table", nil, o{"bucket.number": "1"}, "bucket.number"},
		{"unknown fields", pk, agg("fields.v.bogus", "1"), "fields.v.bogus"},
		{"bucket.num 0", nil, o{"bucket.num": "0"}, "bucket.num"},
		{"bucket.num too big", nil, o{"bucket.num": "4097"}, "bucket.num"},
		{"bucket.num text", nil, o{"bucket.num": "four"}, "bucket.num"},
		{"bucket.key missing column", nil, o{"bucket.key": "nope"}, "bucket.key"},
		{"bucket.key twice", nil, o{"bucket.key": "v,v"}, "bucket.key"},
		{"bucket.key nested", nil, o{"bucket.key": "arr"}, "bucket.key"},
		{"bucket.key empty", nil, o{"bucket.key": ""}, "bucket.key"},
		{"bucket.key empty part", nil, o{"bucket.key": "k,,s"}, "bucket.key"},
		{"bucket.key not in pk", pk, o{"bucket.key": "v"}, "bucket.key"},
		{"merge engine on log", nil, o{"table.merge-engine": "first_row"}, "table.merge-engine"},
		{"merge engine value", pk, o{"table.merge-engine": "last_row"}, "table.merge-engine"},
		{"versioned no column", pk, o{"table.merge-engine": "versioned"}, "table.merge-engine.versioned.ver-column"},
		{"ver-column without versioned", pk, o{"table.merge-engine.versioned.ver-column": "v"}, "table.merge-engine.versioned.ver-column"},
		{"ver-column missing", pk, o{"table.merge-engine": "versioned", "table.merge-engine.versioned.ver-column": "x"}, "table.merge-engine.versioned.ver-column"},
		{"ver-column string", pk, o{"table.merge-engine": "versioned", "table.merge-engine.versioned.ver-column": "s"}, "table.merge-engine.versioned.ver-column"},
		{"ver-column pk", pk, o{"table.merge-engine": "versioned", "table.merge-engine.versioned.ver-column": "k"}, "table.merge-engine.versioned.ver-column"},
		{"ver-column on log", nil, o{"table.merge-engine.versioned.ver-column": "v"}, "table.merge-engine.versioned.ver-column"},
		{"agg without engine", pk, o{"fields.v.agg": "sum"}, "fields.v"},
		{"agg on log", nil, o{"fields.v.agg": "sum"}, "fields.v"},
		{"agg on pk", pk, agg("fields.k.agg", "sum"), "fields.k"},
		{"agg missing column", pk, agg("fields.x.agg", "sum"), "fields.x"},
		{"agg unknown function", pk, agg("fields.v.agg", "count"), "fields.v.agg"},
		{"sum string", pk, agg("fields.s.agg", "sum"), "fields.s.agg"},
		{"product date", pk, agg("fields.dt.agg", "product"), "fields.dt.agg"},
		{"max boolean", pk, agg("fields.b.agg", "max"), "fields.b.agg"},
		{"min bytes", pk, agg("fields.bin.agg", "min"), "fields.bin.agg"},
		{"listagg int", pk, agg("fields.v.agg", "listagg"), "fields.v.agg"},
		{"bool_or int", pk, agg("fields.v.agg", "bool_or"), "fields.v.agg"},
		{"rbm32 binary(n)", pk, agg("fields.fixed.agg", "rbm32"), "fields.fixed.agg"},
		{"rbm64 string", pk, agg("fields.s.agg", "rbm64"), "fields.s.agg"},
		{"empty delimiter", pk, agg("fields.s.agg", "listagg", "fields.s.listagg.delimiter", ""), "fields.s.listagg.delimiter"},
		{"delimiter other fn", pk, agg("fields.s.agg", "max", "fields.s.listagg.delimiter", "|"), "fields.s.listagg.delimiter"},
		{"delimiter wrong alias", pk, agg("fields.s.agg", "listagg", "fields.s.string_agg.delimiter", "|"), "fields.s.string_agg.delimiter"},
		{"delete on log", nil, o{"table.delete.behavior": "ignore"}, "table.delete.behavior"},
		{"delete value", pk, o{"table.delete.behavior": "remove"}, "table.delete.behavior"},
		{"first_row allow", pk, o{"table.merge-engine": "first_row", "table.delete.behavior": "ALLOW"}, "table.delete.behavior"},
		{"versioned allow", pk, o{"table.merge-engine": "versioned", "table.merge-engine.versioned.ver-column": "v", "table.delete.behavior": "allow"}, "table.delete.behavior"},
		{"image on log", nil, o{"table.changelog.image": "full"}, "table.changelog.image"},
		{"image value", pk, o{"table.changelog.image": "half"}, "table.changelog.image"},
		{"aggregation wal", pk, agg("table.changelog.image", "wal"), "table.changelog.image"},
		{"auto-inc on log", nil, o{"auto-increment.fields": "v"}, "auto-increment.fields"},
		{"auto-inc two", pk, o{"auto-increment.fields": "v,f"}, "auto-increment.fields"},
		{"auto-inc missing", pk, o{"auto-increment.fields": "x"}, "auto-increment.fields"},
		{"auto-inc pk", pk, o{"auto-increment.fields": "k"}, "auto-increment.fields"},
		{"auto-inc string", pk, o{"auto-increment.fields": "s"}, "auto-increment.fields"},
		{"auto-inc double", pk, o{"auto-increment.fields": "f"}, "auto-increment.fields"},
		{"cache-size alone", pk, o{"table.auto-increment.cache-size": "10"}, "table.auto-increment.cache-size"},
		{"cache-size zero", pk, o{"auto-increment.fields": "v", "table.auto-increment.cache-size": "0"}, "table.auto-increment.cache-size"},
		{"ttl unit", nil, o{"table.log.ttl": "7 weeks"}, "table.log.ttl"},
		{"ttl negative", nil, o{"table.log.ttl": "-1d"}, "table.log.ttl"},
		{"compression value", nil, o{"table.log.arrow.compression.type": "gzip"}, "table.log.arrow.compression.type"},
		{"zstd level 0", nil, o{"table.log.arrow.compression.zstd.level": "0"}, "table.log.arrow.compression.zstd.level"},
		{"zstd level 23", nil, o{"table.log.arrow.compression.zstd.level": "23"}, "table.log.arrow.compression.zstd.level"},
		{"datalake value", nil, o{"table.datalake.enabled": "yes"}, "table.datalake.enabled"},
		{"datalake format", nil, o{"table.datalake.format": "paimon"}, "table.datalake.format"},
		{"freshness zero", nil, o{"table.datalake.freshness": "0s"}, "table.datalake.freshness"},
		{"freshness text", nil, o{"table.datalake.freshness": "fast"}, "table.datalake.freshness"},
	}
	for _, tt := range bad {
		_, err := NormalizeSpec(testSpec(tt.pk, tt.opts), Defaults{})
		if errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), tt.key) || !strings.Contains(err.Error(), "db.t") {
			t.Errorf("%s: got %v (%v), want invalid argument naming db.t and %q", tt.name, err, errs.KindOf(err), tt.key)
		}
	}
}

// TestOptionNamesMissingColumn checks that an option naming a column the
// table lacks lists the columns it has.
func TestOptionNamesMissingColumn(t *testing.T) {
	var names []string
	for _, c := range testColumns {
		names = append(names, c.Name)
	}
	want := `column "nope" does not exist (columns: ` + strings.Join(names, ", ") + ")"
	pk := []string{testColumns[0].Name}
	for _, opts := range []map[string]string{
		{OptBucketKey: "nope"},
		{OptMergeEngine: MergeVersioned, OptVersionColumn: "nope"},
		{OptAutoIncrementFields: "nope"},
		agg("fields.nope.agg", "sum"),
	} {
		if _, err := NormalizeSpec(testSpec(pk, opts), Defaults{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want an error with %q", opts, err, want)
		}
	}
}

func TestNormalizeSpecColumns(t *testing.T) {
	cols := func(cs ...Column) []Column { return cs }
	tests := []struct {
		name string
		spec TableSpec
		kind errs.Kind
		want []string // substrings of the message
	}{
		{"no columns", TableSpec{Table: "t"}, errs.InvalidArgument, []string{"fluss.t", "column"}},
		{"duplicate", TableSpec{Table: "t", Columns: cols(Column{Name: "a", Type: "INT"}, Column{Name: "a", Type: "INT"})}, errs.InvalidArgument, []string{`"a"`}},
		{"reserved", TableSpec{Table: "t", Columns: cols(Column{Name: "_log_offset", Type: "BIGINT"})}, errs.InvalidArgument, []string{"_log_offset"}},
		{"reserved lake", TableSpec{Table: "t", Columns: cols(Column{Name: "__bucket", Type: "INT"})}, errs.InvalidArgument, []string{"__bucket"}},
		{"empty name", TableSpec{Table: "t", Columns: cols(Column{Name: "", Type: "INT"})}, errs.InvalidArgument, []string{"column name"}},
		{"long name", TableSpec{Table: "t", Columns: cols(Column{Name: strings.Repeat("c", 201), Type: "INT"})}, errs.InvalidArgument, []string{"column name"}},
		{"comma", TableSpec{Table: "t", Columns: cols(Column{Name: "a,b", Type: "INT"})}, errs.InvalidArgument, []string{`"a,b"`}},
		{"bad type", TableSpec{Table: "t", Columns: cols(Column{Name: "a", Type: "INTEGR"})}, errs.InvalidArgument, []string{`column "a"`, "INTEGR"}},
		{"pk missing", TableSpec{Table: "t", Columns: cols(Column{Name: "a", Type: "INT"}), PrimaryKey: []string{"b"}}, errs.InvalidArgument, []string{`"b"`}},
		{"pk twice", TableSpec{Table: "t", Columns: cols(Column{Name: "a", Type: "INT"}), PrimaryKey: []string{"a", "a"}}, errs.InvalidArgument, []string{`"a"`}},
		{"pk nested", TableSpec{Table: "t", Columns: cols(Column{Name: "a", Type: "MAP<INT,INT>"}), PrimaryKey: []string{"a"}}, errs.InvalidArgument, []string{`"a"`, "MAP"}},
		{"view", TableSpec{Table: "t$changelog", Columns: cols(Column{Name: "a", Type: "INT"})}, errs.InvalidArgument, []string{"t$changelog"}},
		{"bad name", TableSpec{Table: "__t", Columns: cols(Column{Name: "a", Type: "INT"})}, errs.InvalidArgument, []string{"__t"}},
	}
	for _, tt := range tests {
		_, err := NormalizeSpec(tt.spec, Defaults{})
		if errs.KindOf(err) != tt.kind {
			t.Errorf("%s: got %v (%v), want %v", tt.name, err, errs.KindOf(err), tt.kind)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: message %q does not name %s", tt.name, err, w)
			}
		}
	}
}

func TestDefaults(t *testing.T) {
	base := map[string]string{
		"bucket.num": "1", "table.log.ttl": "7d", "table.log.arrow.compression.type": "zstd",
		"table.log.arrow.compression.zstd.level": "1", "table.datalake.enabled": "false", "table.datalake.freshness": "3min",
	}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	cols := []Column{{Name: "a", Type: "INT"}, {Name: "b", Type: "bigint"}, {Name: "c", Type: "string"}}
	tests := []struct {
		name     string
		pk       []string
		opts     map[string]string
		defaults Defaults
		want     map[string]string
	}{
		{"log", nil, nil, Defaults{}, base},
		{"server bucket default", nil, nil, Defaults{BucketNum: 8}, with("bucket.num", "8")},
		{"explicit bucket.num wins", nil, map[string]string{"bucket.num": "2"}, Defaults{BucketNum: 8}, with("bucket.num", "2")},
		{"no zstd level without zstd", nil, map[string]string{"table.log.arrow.compression.type": "NONE"}, Defaults{},
			with("table.log.arrow.compression.type", "none", "table.log.arrow.compression.zstd.level", "")},
		{"primary key", []string{"a"}, nil, Defaults{},
			with("bucket.key", "a", "table.delete.behavior", "allow", "table.changelog.image", "full")},
		{"first_row", []string{"a"}, map[string]string{"table.merge-engine": "First_Row"}, Defaults{},
			with("bucket.key", "a", "table.delete.behavior", "ignore", "table.changelog.image", "full", "table.merge-engine", "first_row")},
		{"aggregation", []string{"a"}, map[string]string{"table.merge-engine": "aggregation", "fields.b.agg": "SUM"}, Defaults{},
			with("bucket.key", "a", "table.delete.behavior", "ignore", "table.changelog.image", "full", "table.merge-engine", "aggregation",
				"fields.b.agg", "sum", "fields.c.agg", "last_value_ignore_nulls")},
		{"auto-increment", []string{"c"}, map[string]string{"auto-increment.fields": "a"}, Defaults{},
			with("bucket.key", "c", "table.delete.behavior", "allow", "table.changelog.image", "full",
				"auto-increment.fields", "a", "table.auto-increment.cache-size", "100000")},
		{"values normalized", nil, map[string]string{"table.log.ttl": " 3 Min ", "table.datalake.enabled": "True", "bucket.num": "04"}, Defaults{},
			with("table.log.ttl", "3 min", "table.datalake.enabled", "true", "bucket.num", "4")},
	}
	for _, tt := range tests {
		info, err := NormalizeSpec(TableSpec{Table: "t", Columns: cols, PrimaryKey: tt.pk, Options: tt.opts}, tt.defaults)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !maps.Equal(info.Options, tt.want) {
			t.Errorf("%s: options\n got %v\nwant %v", tt.name, info.Options, tt.want)
		}
	}
}

func TestNormalizedColumns(t *testing.T) {
	no := false
	info, err := NormalizeSpec(TableSpec{Table: "t", Columns: []Column{
		{Name: "id", Type: "bigint", Comment: "key"}, {Name: "ts", Type: "timestamp"}, {Name: "n", Type: "int", Nullable: &no},
	}, PrimaryKey: []string{"id"}}, Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ      string
		nullable bool
	}{{"BIGINT", false}, {"TIMESTAMP(6)", true}, {"INT", false}}
	for i, c := range info.Columns {
		if c.Type != want[i].typ || c.Nullable == nil || *c.Nullable != want[i].nullable {
			t.Errorf("column %s: %s nullable=%v, want %s %v", c.Name, c.Type, c.Nullable, want[i].typ, want[i].nullable)
		}
		if f := info.ArrowSchema().Field(i); f.Nullable != want[i].nullable || f.Name != c.Name {
			t.Errorf("arrow field %d = %v", i, f)
		}
	}
	if info.Columns[0].Comment != "key" || info.Table != "fluss.t" {
		t.Errorf("comment or name lost: %+v", info)
	}
}

func TestKindsAndIndexes(t *testing.T) {
	cols := []Column{{Name: "a", Type: "INT"}, {Name: "b", Type: "STRING"}, {Name: "c", Type: "INT"}}
	tests := []struct {
		name      string
		pk        []string
		bucketKey string
		kind      string
		indexes   string // JSON
		bkIdx     []int
	}{
		{"log", nil, "", "log", `[]`, []int{}},
		{"log with key", nil, "c", "log", `[]`, []int{2}},
		{"pk default bucket key", []string{"a", "b"}, "", "primary_key", `[{"name":"primary_key","columns":["a","b"]}]`, []int{0, 1}},
		{"prefix", []string{"a", "b"}, "a", "primary_key",
			`[{"name":"primary_key","columns":["a","b"]},{"name":"prefix","columns":["a"]}]`, []int{0}},
		{"not an ordered prefix", []string{"a", "b"}, "b", "primary_key", `[{"name":"primary_key","columns":["a","b"]}]`, []int{1}},
		{"same order reversed", []string{"a", "b"}, "b,a", "primary_key", `[{"name":"primary_key","columns":["a","b"]}]`, []int{1, 0}},
	}
	for _, tt := range tests {
		opts := map[string]string{}
		if tt.bucketKey != "" {
			opts["bucket.key"] = tt.bucketKey
		}
		info, err := NormalizeSpec(TableSpec{Table: "t", Columns: cols, PrimaryKey: tt.pk, Options: opts}, Defaults{})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		ix, _ := json.Marshal(info.Indexes)
		if info.Kind != tt.kind || string(ix) != tt.indexes || info.IsPrimaryKey() != (tt.kind == "primary_key") {
			t.Errorf("%s: kind %s indexes %s", tt.name, info.Kind, ix)
		}
		if !slices.Equal(info.BucketKeyIndexes(), tt.bkIdx) {
			t.Errorf("%s: bucket key indexes %v, want %v", tt.name, info.BucketKeyIndexes(), tt.bkIdx)
		}
		if info.HasPrefixIndex() != strings.Contains(tt.indexes, "prefix") {
			t.Errorf("%s: HasPrefixIndex = %v", tt.name, info.HasPrefixIndex())
		}
	}
}

func TestAccessors(t *testing.T) {
	info, err := NormalizeSpec(TableSpec{Table: "d.t", Columns: []Column{
		{Name: "k", Type: "INT"}, {Name: "v", Type: "STRING"}, {Name: "id", Type: "BIGINT"},
	}, PrimaryKey: []string{"k"}, Options: map[string]string{
		"bucket.num": "3", "table.log.ttl": "0ms", "table.datalake.enabled": "true", "table.datalake.freshness": "90s",
		"table.merge-engine": "aggregation", "fields.v.agg": "listagg", "auto-increment.fields": "id",
	}}, Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Path", info.Path(), protocol.TablePath{Database: "d", Table: "t"}},
		{"BucketCount", info.BucketCount(), 3},
		{"BucketKey", strings.Join(info.BucketKey(), ","), "k"},
		{"PrimaryKeyIndexes", info.PrimaryKeyIndexes()[0], 0},
		{"ColumnIndex", info.ColumnIndex("id"), 2},
		{"ColumnIndex absent", info.ColumnIndex("nope"), -1},
		{"LogTTL", info.LogTTL(), time.Duration(0)},
		{"Freshness", info.Freshness(), 90 * time.Second},
		{"Compression", info.Compression(), "zstd"},
		{"ZstdLevel", info.ZstdLevel(), 1},
		{"DatalakeEnabled", info.DatalakeEnabled(), true},
		{"MergeEngine", info.MergeEngine(), "aggregation"},
		{"DeleteBehavior", info.DeleteBehavior(), "ignore"},
		{"ChangelogImage", info.ChangelogImage(), "full"},
		{"AutoIncrementColumn", info.AutoIncrementColumn(), "id"},
		{"AutoIncrementCacheSize", info.AutoIncrementCacheSize(), int64(100000)},
		{"AggFunction", info.AggFunction("v"), "listagg"},
		{"AggFunction key", info.AggFunction("k"), ""},
		{"AggDelimiter", info.AggDelimiter("v"), ","},
		{"Option", info.Option("bucket.num"), "3"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestTableInfoJSON(t *testing.T) {
	info, err := NormalizeSpec(TableSpec{Table: "t", Columns: []Column{{Name: "a", Type: "INT"}}, Comment: "c"}, Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	info.TableID, info.SchemaID, info.CreatedAt = 7, 1, 1234
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(b, &flat); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"table", "columns", "options", "comment", "table_id", "schema_id", "created_at", "kind", "indexes"} {
		if _, ok := flat[k]; !ok {
			t.Errorf("JSON %s lacks %q", b, k)
		}
	}
	var back TableInfo
	if err := json.Unmarshal(b, &back); err != nil || back.TableID != 7 || back.ColumnIndex("a") != 0 || back.BucketCount() != 1 ||
		back.LogTTL() != 7*24*time.Hour || back.ArrowSchema().NumFields() != 1 {
		t.Errorf("decoded TableInfo = %+v, %v", back, err)
	}
	if _, ok := flat["TableSpec"]; ok || !strings.Contains(string(b), `"nullable":true`) || !strings.Contains(string(b), `"indexes":[]`) {
		t.Errorf("JSON not flat or nullability implicit: %s", b)
	}
}

func TestValidateAlter(t *testing.T) {
	base, err := NormalizeSpec(TableSpec{Table: "t", Columns: []Column{{Name: "k", Type: "INT"}, {Name: "v", Type: "INT"}},
		PrimaryKey: []string{"k"}, Options: map[string]string{"table.merge-engine": "aggregation", "table.log.ttl": "1d"}}, Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	base.SchemaID = 1
	yes, no := true, false

	got, err := ValidateAlter(base, map[string]string{"table.datalake.enabled": "TRUE", "table.datalake.freshness": "1min"},
		[]string{"table.log.ttl"}, []Column{{Name: "n", Type: "string"}, {Name: "m", Type: "DOUBLE", Nullable: &yes}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Option("table.datalake.enabled") != "true" || got.Freshness() != time.Minute || got.Option("table.log.ttl") != "7d" {
		t.Errorf("options after alter: %v", got.Options)
	}
	if got.SchemaID != 2 || len(got.Columns) != 4 || got.Columns[2].Name != "n" || got.Columns[2].Type != "STRING" ||
		got.ColumnIndex("m") != 3 || got.ArrowSchema().NumFields() != 4 || got.AggFunction("n") != AggDefault {
		t.Errorf("columns after alter: schema %d %+v %v", got.SchemaID, got.Columns, got.Options)
	}
	if base.SchemaID != 1 || len(base.Columns) != 2 || base.Option("table.datalake.enabled") != "false" {
		t.Errorf("alter modified its input")
	}
	if same, _ := ValidateAlter(base, map[string]string{"table.log.ttl": "2h"}, nil, nil); same.SchemaID != 1 || same.LogTTL() != 2*time.Hour {
		t.Errorf("option-only alter changed schema id or missed ttl: %+v", same)
	}

	bad := []struct {
		name  string
		set   map[string]string
		reset []string
		add   []Column
		want  string
	}{
		{"not alterable", map[string]string{"bucket.num": "2"}, nil, nil, "bucket.num"},
		{"unknown", map[string]string{"table.foo": "2"}, nil, nil, "table.foo"},
		{"reset not alterable", nil, []string{"table.merge-engine"}, nil, "table.merge-engine"},
		{"bad value", map[string]string{"table.log.ttl": "soon"}, nil, nil, "table.log.ttl"},
		{"set and reset", map[string]string{"table.log.ttl": "1h"}, []string{"table.log.ttl"}, nil, "table.log.ttl"},
		{"not null column", nil, nil, []Column{{Name: "x", Type: "INT", Nullable: &no}}, `"x"`},
		{"duplicate column", nil, nil, []Column{{Name: "v", Type: "INT"}}, `"v"`},
		{"bad type", nil, nil, []Column{{Name: "x", Type: "NUMBER"}}, "NUMBER"},
		{"reserved column", nil, nil, []Column{{Name: "_change_type", Type: "STRING"}}, "_change_type"},
	}
	for _, tt := range bad {
		_, err := ValidateAlter(base, tt.set, tt.reset, tt.add)
		if errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want invalid argument naming %s", tt.name, err, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "3min": 3 * time.Minute, "0ms": 0, "1000": time.Second, "2 h": 2 * time.Hour,
		"30s": 30 * time.Second, "5sec": 5 * time.Second, "10 minutes": 10 * time.Minute, "1DAY": 24 * time.Hour,
		"7m": 7 * time.Minute, "15us": 15 * time.Microsecond, "3ns": 3, "2 hours": 2 * time.Hour, "4millis": 4 * time.Millisecond,
	}
	for in, want := range good {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1d", "1.5h", "7 weeks", "1e3s", "99999999999999999999d", "200000d"} {
		if _, err := ParseDuration(in); errs.KindOf(err) != errs.InvalidArgument {
			t.Errorf("ParseDuration(%q) = %v, want invalid argument", in, err)
		}
	}
}
