package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad golden %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", got, want)
	}
}

func TestParseColumnFlag(t *testing.T) {
	for in, want := range map[string]client.Column{
		"id:BIGINT":                   {Name: "id", Type: "BIGINT"},
		"id:BIGINT:notnull":           {Name: "id", Type: "BIGINT", Nullable: new(false)},
		"id:BIGINT:NOT NULL":          {Name: "id", Type: "BIGINT", Nullable: new(false)},
		"id:BIGINT NOT NULL":          {Name: "id", Type: "BIGINT", Nullable: new(false)},
		"amount:DECIMAL(10,2)":        {Name: "amount", Type: "DECIMAL(10,2)"},
		"m: MAP<STRING, INT> ":        {Name: "m", Type: "MAP<STRING, INT>"},
		"r:ROW<a INT, b STRING>:null": {Name: "r", Type: "ROW<a INT, b STRING>"},
		"ts:TIMESTAMP_LTZ(3):notnull": {Name: "ts", Type: "TIMESTAMP_LTZ(3)", Nullable: new(false)},
	} {
		got, err := parseColumnFlag(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("parseColumnFlag(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"id", ":INT", "id:", "id:INT:what"} {
		if _, err := parseColumnFlag(bad); err == nil {
			t.Errorf("parseColumnFlag(%q) succeeded", bad)
		}
	}
}

func TestCreateTableBody(t *testing.T) {
	f := createFlags{
		name:        "fluss.orders",
		columns:     multiFlag{"order_id:BIGINT:notnull", "amount:DECIMAL(10,2)", "ts:TIMESTAMP(3)"},
		pk:          "order_id",
		options:     multiFlag{"table.log.ttl=1d", "fields.amount.agg=sum"},
		buckets:     4,
		bucketKey:   "order_id",
		comment:     "c",
		ifNotExists: true,
	}
	body, err := createTableBody(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, body, `{"table": "fluss.orders", "columns": [
		{"name": "order_id", "type": "BIGINT", "nullable": false},
		{"name": "amount", "type": "DECIMAL(10,2)"},
		{"name": "ts", "type": "TIMESTAMP(3)"}],
		"primary_key": ["order_id"],
		"options": {"table.log.ttl": "1d", "fields.amount.agg": "sum", "bucket.num": "4", "bucket.key": "order_id"},
		"comment": "c", "if_not_exists": true}`)

	// A spec file goes as it is, unknown fields included (the server judges).
	spec := `{"table": "d.t", "columns": [{"name": "a", "type": "INT", "colour": "red"}]}`
	body, err = createTableBody(createFlags{spec: "s.json", ifNotExists: true}, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, body, `{"table": "d.t", "columns": [{"name": "a", "type": "INT", "colour": "red"}], "if_not_exists": true}`)
	body, err = createTableBody(createFlags{spec: "s.json", name: "d.u"}, []byte(spec))
	if err != nil || !strings.Contains(string(body), `"d.u"`) {
		t.Errorf("--name over a spec: %s, %v", body, err)
	}

	for name, tc := range map[string]struct {
		f    createFlags
		spec string
	}{
		"no name":          {createFlags{columns: multiFlag{"a:INT"}}, ""},
		"no columns":       {createFlags{name: "t"}, ""},
		"bad option":       {createFlags{name: "t", columns: multiFlag{"a:INT"}, options: multiFlag{"novalue"}}, ""},
		"spec and columns": {createFlags{spec: "s", columns: multiFlag{"a:INT"}}, `{"table": "t"}`},
		"spec not JSON":    {createFlags{spec: "s"}, `{`},
		"spec no table":    {createFlags{spec: "s"}, `{"columns": []}`},
	} {
		var spec []byte
		if tc.spec != "" {
			spec = []byte(tc.spec)
		}
		if _, err := createTableBody(tc.f, spec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCLIError(t *testing.T) {
	base := status.Error(codes.NotFound, "table fluss.nope not found")
	wrapped := fmt.Errorf("table fluss.nope: describe-table: %w", base)
	err := cliError(wrapped)
	if err.Error() != "NOT_FOUND: table fluss.nope not found" {
		t.Errorf("cliError = %q", err)
	}
	if status.Code(err) != codes.NotFound {
		t.Errorf("status.Code = %v", status.Code(err))
	}
	if !errors.Is(err, base) {
		t.Error("the status error is not in the chain")
	}
	plain := errors.New("open x.csv: no such file")
	if cliError(plain) != plain || cliError(nil) != nil || cliError(flag.ErrHelp) != flag.ErrHelp {
		t.Error("non-RPC errors must pass through")
	}
	for c, want := range map[codes.Code]string{codes.InvalidArgument: "INVALID_ARGUMENT", codes.FailedPrecondition: "FAILED_PRECONDITION",
		codes.Canceled: "CANCELLED", codes.DataLoss: "DATA_LOSS", codes.Code(99): "Code(99)"} {
		if got := codeName(c); got != want {
			t.Errorf("codeName(%v) = %q, want %q", c, got, want)
		}
	}
}

func TestScanRequestFromFlags(t *testing.T) {
	req, err := scanRequest(scanFlags{table: "fluss.orders", columns: "a, b", filter: `{"gt": ["a", 1]}`,
		startup: "1700000000000", follow: true, limit: 10, buckets: "0,2"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(req)
	jsonEqual(t, b, `{"table": "fluss.orders", "columns": ["a", "b"], "filter": {"gt": ["a", 1]},
		"startup": {"timestamp": 1700000000000}, "stop": "none", "limit": 10, "buckets": [0, 2]}`)

	req, err = scanRequest(scanFlags{table: "t", startup: `{"0": 5}`, stop: `{"offsets": {"0": 9}}`})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(req)
	jsonEqual(t, b, `{"table": "t", "startup": {"offsets": {"0": 5}}, "stop": {"offsets": {"0": 9}}}`)

	for name, f := range map[string]scanFlags{
		"no table":       {},
		"bad filter":     {table: "t", filter: "{"},
		"bad startup":    {table: "t", startup: "yesterday"},
		"follow + stop":  {table: "t", follow: true, stop: "latest"},
		"bad bucket":     {table: "t", buckets: "x"},
		"negative limit": {table: "t", limit: -1},
	} {
		if _, err := scanRequest(f); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSummaries(t *testing.T) {
	if got := formatOffsets(map[int]int64{10: 1, 2: 40, 0: 7}); got != "0:7 2:40 10:1" {
		t.Errorf("formatOffsets = %q", got)
	}
	var out bytes.Buffer
	writeTableList(&out, []client.TableInfo{
		{TableSpec: client.TableSpec{Table: "fluss.b", Columns: []client.Column{{Name: "x", Type: "INT"}}, Options: map[string]string{"bucket.num": "2"}}, Kind: "log"},
		{TableSpec: client.TableSpec{Table: "fluss.a", PrimaryKey: []string{"k"}, Columns: []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "STRING"}}}, Kind: "primary_key"},
	})
	want := `TABLE    KIND         BUCKETS  PRIMARY KEY  COLUMNS
fluss.a  primary_key  -        k            k BIGINT, v STRING
fluss.b  log          2        -            x INT
`
	if out.String() != want {
		t.Errorf("table list:\n%s\nwant:\n%s", out.String(), want)
	}
}
