package conformance

// lookup-bad-input: lookups that PROTOCOL.md §1 and §6 refuse, each with its
// exact code and a message naming the culprit, through DoExchange and inline
// through GetFlightInfo; a refused insert-if-not-exists inserts nothing.

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

func lookupBadInput(ctx context.Context, env *Env) error {
	// pp: primary key (a, b), bucket key a, so a prefix index on a.
	pp, _, err := createPK(ctx, env, client.TableSpec{Table: env.Table("lk_bad_pp"), Columns: ppColumns,
		PrimaryKey: []string{"a", "b"}, Options: map[string]string{"bucket.num": "2", "bucket.key": "a"}})
	if err != nil {
		return err
	}
	// one: primary key id, bucketed by it: no prefix index.
	one, _, err := createPK(ctx, env, client.TableSpec{Table: env.Table("lk_bad_one"),
		Columns:    []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: "STRING"}},
		PrimaryKey: []string{"id"}, Options: map[string]string{"bucket.num": "2"}})
	if err != nil {
		return err
	}
	// strict: a NOT NULL column besides the key and the auto-increment column.
	strict, _, err := createPK(ctx, env, client.TableSpec{Table: env.Table("lk_bad_strict"),
		Columns:    []client.Column{{Name: "k", Type: "STRING"}, {Name: "uid", Type: "INT"}, {Name: "must", Type: "STRING", Nullable: new(false)}},
		PrimaryKey: []string{"k"}, Options: map[string]string{"bucket.num": "2", "auto-increment.fields": "uid"}})
	if err != nil {
		return err
	}
	// dict: a dictionary table, empty, that refused inserts must leave empty.
	dict, _, err := createPK(ctx, env, client.TableSpec{Table: env.Table("lk_bad_dict"),
		Columns:    []client.Column{{Name: "k", Type: "STRING"}, {Name: "uid", Type: "INT"}},
		PrimaryKey: []string{"k"}, Options: map[string]string{"bucket.num": "2", "auto-increment.fields": "uid"}})
	if err != nil {
		return err
	}
	logTable := env.Table("lk_bad_log")
	if _, err := createTable(ctx, env, simpleSpec(logTable, 2, true)); err != nil {
		return err
	}
	if _, err := writeRows(ctx, env, pp, client.WriteRequest{Table: pp.name}, []string{"a", "b", "v", "n"},
		pkBatch{{int64(1), "x", "v", int64(1)}, {int64(2), "y", nil, int64(2)}}); err != nil {
		return err
	}

	ab := pp.fields([]string{"a", "b"})
	nullableA := arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	nullableK := arrow.Field{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}
	cases := []struct {
		what    string
		req     client.LookupRequest
		fields  []arrow.Field
		keys    [][]any
		code    codes.Code
		culprit string
	}{
		{"point lookup whose key batch lacks key column b", client.LookupRequest{Table: pp.name},
			pp.fields([]string{"a"}), [][]any{{int64(1)}}, codes.InvalidArgument, "b"},
		{"point lookup whose key batch has the extra column v", client.LookupRequest{Table: pp.name},
			pp.fields([]string{"a", "b", "v"}), [][]any{{int64(1), "x", "v"}}, codes.InvalidArgument, "v"},
		{"point lookup whose key column a is INT, not BIGINT", client.LookupRequest{Table: pp.name},
			[]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}, ab[1]}, [][]any{{int64(1), "x"}}, codes.InvalidArgument, "a"},
		{"point lookup whose key column b is BIGINT, not STRING", client.LookupRequest{Table: pp.name},
			[]arrow.Field{ab[0], {Name: "b", Type: arrow.PrimitiveTypes.Int64}}, [][]any{{int64(1), int64(2)}}, codes.InvalidArgument, "b"},
		{"point lookup with a null key (among valid keys)", client.LookupRequest{Table: pp.name},
			[]arrow.Field{nullableA, ab[1]}, [][]any{{int64(1), "x"}, {nil, "y"}}, codes.InvalidArgument, "a"},
		{"prefix lookup whose key batch is the whole primary key", client.LookupRequest{Table: pp.name, Prefix: true},
			ab, [][]any{{int64(1), "x"}}, codes.InvalidArgument, "b"},
		{"prefix lookup with a null prefix", client.LookupRequest{Table: pp.name, Prefix: true},
			[]arrow.Field{nullableA}, [][]any{{nil}}, codes.InvalidArgument, "a"},
		{"point lookup of a log table", client.LookupRequest{Table: logTable},
			[]arrow.Field{simpleSchema.Field(0)}, [][]any{{int64(1)}}, codes.FailedPrecondition, logTable},
		{"prefix lookup of a table without a prefix index (bucket key id = primary key)", client.LookupRequest{Table: one.name, Prefix: true},
			one.fields([]string{"id"}), [][]any{{int64(1)}}, codes.FailedPrecondition, "id"},
		{"insert-if-not-exists on a table with the NOT NULL non-key column must", client.LookupRequest{Table: strict.name, InsertIfNotExists: true},
			strict.fields([]string{"k"}), [][]any{{"new"}}, codes.FailedPrecondition, "must"},
		{"insert-if-not-exists with prefix, on a table with a prefix index", client.LookupRequest{Table: pp.name, Prefix: true, InsertIfNotExists: true},
			pp.fields([]string{"a"}), [][]any{{int64(1)}}, codes.InvalidArgument, ""},
		{"insert-if-not-exists with prefix, on a table without a prefix index (malformed whatever the table)", client.LookupRequest{Table: dict.name, Prefix: true, InsertIfNotExists: true},
			dict.fields([]string{"k"}), [][]any{{"new"}}, codes.InvalidArgument, ""},
		{"insert-if-not-exists with a null key among new keys", client.LookupRequest{Table: dict.name, InsertIfNotExists: true},
			[]arrow.Field{nullableK}, [][]any{{"k1"}, {nil}, {"k2"}}, codes.InvalidArgument, "k"},
		{"insert-if-not-exists whose key batch has the extra column uid", client.LookupRequest{Table: dict.name, InsertIfNotExists: true},
			dict.fields([]string{"k", "uid"}), [][]any{{"k3", int64(7)}}, codes.InvalidArgument, "uid"},
		{"lookup of an unknown table", client.LookupRequest{Table: env.Table("lk_bad_nope")},
			pp.fields([]string{"a", "b"}), [][]any{{int64(1), "x"}}, codes.NotFound, env.Table("lk_bad_nope")},
		{"lookup projecting the unknown column nope", client.LookupRequest{Table: pp.name, Columns: []string{"v", "nope"}},
			ab, [][]any{{int64(1), "x"}}, codes.NotFound, "nope"},
		{"lookup projecting column v twice", client.LookupRequest{Table: pp.name, Columns: []string{"v", "v"}},
			ab, [][]any{{int64(1), "x"}}, codes.InvalidArgument, "v"},
	}
	// Every case runs, so that one wrong code does not hide the others.
	var wrong []error
	for _, tc := range cases {
		err := lookupError(ctx, env, tc.req, tc.fields, tc.keys)
		what := fmt.Sprintf("%s (%s, key columns %s, keys %s)", tc.what, describeLookup(tc.req), fieldList(tc.fields), abbrevRows(tc.keys))
		if err := wantCode(what, err, tc.code, tc.culprit); err != nil {
			wrong = append(wrong, err)
		}
	}

	// Commands the server cannot read.
	for _, tc := range []struct {
		what    string
		cmd     string
		culprit string
	}{
		{"a lookup command with the unknown field bogus", fmt.Sprintf(`{"lookup": {"table": %q, "bogus": true}}`, pp.name), "bogus"},
		{"a lookup command whose prefix is a string", fmt.Sprintf(`{"lookup": {"table": %q, "prefix": "yes"}}`, pp.name), "prefix"},
		{"a lookup command with inline keys, sent to DoExchange", fmt.Sprintf(`{"lookup": {"table": %q, "keys": [{"a": 1, "b": "x"}]}}`, pp.name), "keys"},
	} {
		l, err := env.Client.LookupDescriptor(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(tc.cmd)})
		if err == nil {
			err = lookupErrorOn(l, env, ab, [][]any{{int64(1), "x"}})
		}
		if err := wantCode(fmt.Sprintf("%s: DoExchange %s", tc.what, tc.cmd), err, codes.InvalidArgument, tc.culprit); err != nil {
			wrong = append(wrong, err)
		}
	}

	// The same refusals inline, through GetFlightInfo.
	for _, tc := range []struct {
		what    string
		req     client.LookupRequest
		keys    []map[string]any
		code    codes.Code
		culprit string
	}{
		{"inline lookup whose keys lack b", client.LookupRequest{Table: pp.name}, []map[string]any{{"a": 1}}, codes.InvalidArgument, "b"},
		{"inline lookup whose keys have the extra column v", client.LookupRequest{Table: pp.name}, []map[string]any{{"a": 1, "b": "x", "v": "v"}}, codes.InvalidArgument, "v"},
		{"inline lookup whose key a is not a number", client.LookupRequest{Table: pp.name}, []map[string]any{{"a": "one", "b": "x"}}, codes.InvalidArgument, "a"},
		{"inline lookup with a null key", client.LookupRequest{Table: pp.name}, []map[string]any{{"a": nil, "b": "x"}}, codes.InvalidArgument, "a"},
		{"inline lookup of an unknown table", client.LookupRequest{Table: env.Table("lk_bad_nope")}, []map[string]any{{"a": 1}}, codes.NotFound, env.Table("lk_bad_nope")},
		{"inline lookup of a log table", client.LookupRequest{Table: logTable}, []map[string]any{{"id": 1}}, codes.FailedPrecondition, logTable},
		{"inline prefix lookup of a table without a prefix index", client.LookupRequest{Table: one.name, Prefix: true}, []map[string]any{{"id": 1}}, codes.FailedPrecondition, "id"},
	} {
		tbl, err := env.Client.LookupInline(ctx, tc.req, tc.keys)
		if tbl != nil {
			tbl.Release()
		}
		if err := wantCode(fmt.Sprintf("%s (%s, keys %v)", tc.what, describeLookup(tc.req), tc.keys), err, tc.code, tc.culprit); err != nil {
			wrong = append(wrong, err)
		}
	}

	// Nothing of the refused inserts is there, and the tables still answer.
	for _, t := range []*pkTable{dict, strict} {
		state, _, err := readSnapshot(ctx, env, t)
		if err != nil {
			return errors.Join(append(wrong, err)...)
		}
		if len(state) != 0 {
			wrong = append(wrong, fmt.Errorf("after refused insert-if-not-exists lookups, %s holds %d rows (%v); want none", t.name, len(state), state))
		}
	}
	rows, err := lookupOnce(ctx, env, pp, client.LookupRequest{Table: pp.name}, ab, [][]any{{int64(2), "y"}})
	if err == nil && (len(rows) != 1 || fmtRow(rows[0].row) != `(2, "y", NULL, 2)`) {
		err = fmt.Errorf("lookup of (2, y) in %s after the refused lookups: %v, want key 0: (2, \"y\", NULL, 2)", pp.name, rows)
	}
	if err != nil {
		wrong = append(wrong, err)
	}
	return errors.Join(wrong...)
}
