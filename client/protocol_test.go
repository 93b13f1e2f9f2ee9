package client

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// jsonEqual compares two JSON texts as values, ignoring key order and spacing.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad golden JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", got, want)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScanRequestJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  ScanRequest
		want string
	}{
		{
			name: "protocol example §4.2",
			req: ScanRequest{
				Table:   "fluss.orders",
				Columns: []string{"order_id", "amount"},
				Filter:  json.RawMessage(`{"and": [{"gt": ["amount", "100.00"]}, {"in": ["user_id", [1, 2, 3]]}]}`),
				Startup: Full,
				Stop:    Latest,
				Buckets: []int{0, 2},
				Limit:   new(int64(1000)),
			},
			want: `{
				"table": "fluss.orders",
				"columns": ["order_id", "amount"],
				"filter": {"and": [{"gt": ["amount", "100.00"]}, {"in": ["user_id", [1, 2, 3]]}]},
				"startup": "full",
				"stop": "latest",
				"buckets": [0, 2],
				"limit": 1000
			}`,
		},
		{
			name: "defaults are omitted",
			req:  ScanRequest{Table: "t"},
			want: `{"table": "t"}`,
		},
		{
			name: "follow from a timestamp",
			req:  ScanRequest{Table: "d.t$changelog", Startup: AtTimestamp(1700000000000), Stop: Unbounded, Compression: "zstd"},
			want: `{"table": "d.t$changelog", "startup": {"timestamp": 1700000000000}, "stop": "none", "compression": "zstd"}`,
		},
		{
			name: "offsets",
			req:  ScanRequest{Table: "t", Startup: AtOffsets(map[int]int64{0: 12, 3: 40}), Stop: AtOffsets(map[int]int64{0: 100})},
			want: `{"table": "t", "startup": {"offsets": {"0": 12, "3": 40}}, "stop": {"offsets": {"0": 100}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jsonEqual(t, mustMarshal(t, tc.req), tc.want)
		})
	}
}

func TestWriteRequestJSON(t *testing.T) {
	full := WriteRequest{Table: "fluss.orders", Mode: ModeUpsert, Columns: []string{"order_id", "amount"},
		MergeMode: MergeDefault, WriterID: "6f1c...", FirstSequence: 0}
	jsonEqual(t, mustMarshal(t, full), `{"table": "fluss.orders", "mode": "upsert", "columns": ["order_id", "amount"],
		"merge_mode": "default", "writer_id": "6f1c..."}`) // first_sequence 0 is the default
	jsonEqual(t, mustMarshal(t, WriteRequest{Table: "t", Mode: ModeDelete}), `{"table": "t", "mode": "delete"}`)

	var back WriteRequest
	if err := json.Unmarshal(mustMarshal(t, full), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, full) {
		t.Errorf("round trip: got %+v, want %+v", back, full)
	}
	if !onlyTable(WriteRequest{Table: "t"}) || onlyTable(WriteRequest{Table: "t", Mode: ModeAppend}) {
		t.Error("onlyTable")
	}
}

func TestTableSpecJSON(t *testing.T) {
	spec := TableSpec{
		Table: "fluss.orders",
		Columns: []Column{
			{Name: "order_id", Type: "BIGINT", Nullable: new(false), Comment: "optional"},
			{Name: "user_id", Type: "BIGINT"},
			{Name: "amount", Type: "DECIMAL(10,2)"},
			{Name: "ts", Type: "TIMESTAMP(3)"},
		},
		PrimaryKey: []string{"order_id"},
		Options:    map[string]string{"bucket.num": "4", "bucket.key": "order_id"},
		Comment:    "optional",
	}
	// PROTOCOL.md §2, minus the empty partition_keys, which the client omits.
	jsonEqual(t, mustMarshal(t, spec), `{
	  "table": "fluss.orders",
	  "columns": [
	    {"name": "order_id", "type": "BIGINT", "nullable": false, "comment": "optional"},
	    {"name": "user_id",  "type": "BIGINT"},
	    {"name": "amount",   "type": "DECIMAL(10,2)"},
	    {"name": "ts",       "type": "TIMESTAMP(3)"}
	  ],
	  "primary_key": ["order_id"],
	  "options": {"bucket.num": "4", "bucket.key": "order_id"},
	  "comment": "optional"
	}`)

	body := struct {
		TableSpec
		IfNotExists bool `json:"if_not_exists,omitempty"`
	}{TableSpec{Table: "t", Columns: []Column{{Name: "a", Type: "INT"}}}, true}
	jsonEqual(t, mustMarshal(t, body), `{"table": "t", "columns": [{"name": "a", "type": "INT"}], "if_not_exists": true}`)
}

func TestTableInfoDecode(t *testing.T) {
	const in = `{"table": "fluss.orders", "columns": [
		{"name": "order_id", "type": "BIGINT", "nullable": false},
		{"name": "amount", "type": "DECIMAL(10,2)", "nullable": true},
		{"name": "note", "type": "STRING"}],
		"primary_key": ["order_id"], "partition_keys": [],
		"options": {"bucket.num": "4", "auto-increment.fields": "uid"},
		"table_id": 7, "schema_id": 1, "created_at": 1764460800000, "kind": "primary_key",
		"indexes": [{"name": "primary_key", "columns": ["order_id"]}], "some_future_field": 1}`
	var info TableInfo
	if err := json.Unmarshal([]byte(in), &info); err != nil {
		t.Fatal(err)
	}
	if info.Table != "fluss.orders" || info.TableID != 7 || info.SchemaID != 1 || !info.HasPrimaryKey() {
		t.Errorf("decoded %+v", info)
	}
	if info.Columns[0].IsNullable() || !info.Columns[1].IsNullable() || !info.Columns[2].IsNullable() {
		t.Errorf("nullability: %+v", info.Columns)
	}
	if got := time.UnixMilli(info.CreatedAt).UTC().Format("2006-01-02"); got != "2025-11-30" {
		t.Errorf("created_at = %s", got)
	}
	if got := info.AutoIncrementColumns(); !reflect.DeepEqual(got, []string{"uid"}) {
		t.Errorf("auto increment = %v", got)
	}
}

func TestActionBodies(t *testing.T) {
	at := struct {
		Table   string   `json:"table"`
		At      Position `json:"at"`
		Buckets []int    `json:"buckets,omitempty"`
	}{"d.t", AtTimestamp(5), []int{0, 1}}
	jsonEqual(t, mustMarshal(t, at), `{"table": "d.t", "at": {"timestamp": 5}, "buckets": [0, 1]}`)
	jsonEqual(t, mustMarshal(t, AlterRequest{Table: "d.t", Set: map[string]string{"table.log.ttl": "1d"}, Reset: []string{"x"},
		AddColumns: []Column{{Name: "c", Type: "INT"}}}),
		`{"table": "d.t", "set": {"table.log.ttl": "1d"}, "reset": ["x"], "add_columns": [{"name": "c", "type": "INT"}]}`)
}

func TestPosition(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Position
		json string
	}{
		{"full", Full, `"full"`},
		{"EARLIEST", Earliest, `"earliest"`},
		{"latest", Latest, `"latest"`},
		{"none", Unbounded, `"none"`},
		{"1700000000000", AtTimestamp(1700000000000), `{"timestamp": 1700000000000}`},
		{`{"timestamp": 3}`, AtTimestamp(3), `{"timestamp": 3}`},
		{`{"offsets": {"0": 12, "1": 40}}`, AtOffsets(map[int]int64{0: 12, 1: 40}), `{"offsets": {"0": 12, "1": 40}}`},
		{`{"0": 12}`, AtOffsets(map[int]int64{0: 12}), `{"offsets": {"0": 12}}`},
	} {
		got, err := ParsePosition(tc.in)
		if err != nil {
			t.Errorf("ParsePosition(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePosition(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
		b := mustMarshal(t, got)
		jsonEqual(t, b, tc.json)
		var back Position
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("round trip of %s: %#v, %v", b, back, err)
		}
	}
	for _, bad := range []string{"soon", "{", `{"timestamp": 1, "offsets": {}}`, `{"x": 1}`, "-", "1.5"} {
		if _, err := ParsePosition(bad); err == nil {
			t.Errorf("ParsePosition(%q) succeeded", bad)
		}
	}
	if !(Position{}).IsZero() || Full.IsZero() || !Unbounded.IsUnbounded() {
		t.Error("IsZero/IsUnbounded")
	}
	if Latest.String() != "latest" {
		t.Errorf("String = %q", Latest.String())
	}
}

func TestAppMetadataParsing(t *testing.T) {
	pr, err := ParsePutResult([]byte(`{"sequence": 3, "rows": 124, "buckets": {"0": 124, "3": 9}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := PutResult{protocol.PutResult{Sequence: 3, Rows: 124, Buckets: map[int]int64{0: 124, 3: 9}}, 1}
	if !reflect.DeepEqual(pr, want) {
		t.Errorf("PutResult = %+v, want %+v", pr, want)
	}
	if _, err := ParsePutResult(nil); err == nil {
		t.Error("empty PutResult metadata accepted")
	}
	if _, err := ParsePutResult([]byte(`{"sequence": "x"}`)); err == nil {
		t.Error("bad PutResult metadata accepted")
	}

	var merged PutResult
	merged.merge(pr)
	merged.merge(PutResult{protocol.PutResult{Sequence: 4, Rows: 6, Buckets: map[int]int64{0: 130, 1: 2}}, 1})
	want = PutResult{protocol.PutResult{Sequence: 4, Rows: 130, Buckets: map[int]int64{0: 130, 1: 2, 3: 9}}, 2}
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("merged = %+v, want %+v", merged, want)
	}

	m, ok, err := ParseBatchMeta([]byte(`{"bucket": 2, "start": 100, "next": 164, "high_watermark": 200}`))
	if err != nil || !ok || m != (BatchMeta{Bucket: 2, Start: 100, Next: 164, HighWatermark: 200}) {
		t.Errorf("BatchMeta = %+v %v %v", m, ok, err)
	}
	if _, ok, err := ParseBatchMeta(nil); ok || err != nil {
		t.Errorf("empty BatchMeta: %v %v", ok, err)
	}
	if _, _, err := ParseBatchMeta([]byte(`{`)); err == nil {
		t.Error("bad BatchMeta accepted")
	}

	var pm PlanMeta
	if err := json.Unmarshal([]byte(`{"table_id": 7, "schema_id": 2, "buckets": 4, "lake_snapshot_id": null}`), &pm); err != nil ||
		pm.TableID != 7 || pm.SchemaID != 2 || pm.Buckets != 4 || pm.LakeSnapshotID != nil {
		t.Errorf("PlanMeta = %+v %v", pm, err)
	}
	if err := json.Unmarshal([]byte(`{"lake_snapshot_id": 99}`), &pm); err != nil || pm.LakeSnapshotID == nil || *pm.LakeSnapshotID != 99 {
		t.Errorf("PlanMeta lake snapshot: %+v %v", pm, err)
	}
}

func TestTicketJSON(t *testing.T) {
	const in = `{"v": 1, "table_id": 7, "table": "fluss.orders", "view": "log", "bucket": 0, "start": 0, "stop": 100,
		"columns": ["a"], "filter": {"is_null": "a"}, "lake_snapshot_id": null, "limit": null}`
	tk, err := ParseTicket([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if tk.TableID != 7 || tk.View != "log" || tk.Stop == nil || *tk.Stop != 100 || tk.Limit != nil {
		t.Errorf("ticket = %+v", tk)
	}
	b, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, b, in)
	if _, err := ParseTicket([]byte("not json")); err == nil {
		t.Error("bad ticket accepted")
	}
}
