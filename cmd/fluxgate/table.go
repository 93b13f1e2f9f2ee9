package main

// fluxgate table create|list|describe|drop: table definitions through the
// actions of PROTOCOL.md §3.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

func tableCommand(std stdio) *ff.Command {
	list, describe := tableList(std), tableDescribe(std)
	return cli.Group("table", "fluxgate table <command> [flags]", "create, list, describe, alter or drop tables",
		tableCreate(std), list, cli.Alias("ls", list), describe, cli.Alias("desc", describe), tableAlter(std), tableDrop(std))
}

// createFlags are the flags of table create.
type createFlags struct {
	spec        string
	name        string
	columns     multiFlag
	pk          string
	partitionBy string
	bucketKey   string
	buckets     int
	options     multiFlag
	comment     string
	ifNotExists bool
}

func tableCreate(std stdio) *ff.Command {
	var f createFlags
	var conn connFlags
	fs := cli.NewFlagSet("create")
	conn.register(fs.FlagSet)
	fs.StringVar(&f.spec, "spec", "", "table definition: a JSON TableSpec file (PROTOCOL.md §2), - for stdin")
	fs.StringVar(&f.name, "name", "", "table name, database.table (or the first argument)")
	fs.Var(&f.columns, "column", "a column as name:TYPE or name:TYPE:notnull (repeatable), e.g. amount:DECIMAL(10,2)")
	fs.StringVar(&f.pk, "pk", "", "primary key columns, comma-separated (makes a primary-key table)")
	fs.StringVar(&f.partitionBy, "partition-by", "", "partition key columns, comma-separated (makes a partitioned table)")
	fs.StringVar(&f.bucketKey, "bucket-key", "", "bucket key columns, comma-separated (option bucket.key)")
	fs.IntVar(&f.buckets, "buckets", 0, "number of buckets (option bucket.num)")
	fs.Var(&f.options, "option", "a table option key=value (repeatable), e.g. table.merge-engine=first_row")
	fs.StringVar(&f.comment, "comment", "", "table comment")
	fs.BoolVar(&f.ifNotExists, "if-not-exists", false, "succeed if the table exists already")
	return &ff.Command{Name: "create", Usage: "fluxgate table create (--spec FILE.json | --name T --column name:TYPE[:notnull] ...) [flags]", ShortHelp: "create a table from a JSON spec or from --name and --column flags", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			var err error
			if len(pos) > 1 || (len(pos) == 1 && f.name != "") {
				return fmt.Errorf("table create: unexpected arguments %q", pos)
			}
			if len(pos) == 1 {
				f.name = pos[0]
			}
			var specFile []byte
			if f.spec != "" {
				if specFile, err = readFileOrStdin(f.spec, std.in); err != nil {
					return err
				}
			}
			body, err := createTableBody(f, specFile)
			if err != nil {
				return err
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			var info client.TableInfo
			if err := c.Action(ctx, client.ActionCreateTable, body, &info); err != nil {
				return err
			}
			kind := info.Kind
			if kind == "" {
				kind = "table"
			} else {
				kind = strings.ReplaceAll(kind, "_", "-") + " table"
			}
			fmt.Fprintf(std.out, "created %s: %s, %s bucket(s), table_id %d\n", info.Table, kind, orDash(info.Options["bucket.num"]), info.TableID)
			return nil

		}}
}

// createTableBody builds the create-table body from a spec file or from the
// flags. A spec file is sent as it is (so the server checks every field),
// with "table" and "if_not_exists" set from the flags when given.
func createTableBody(f createFlags, specFile []byte) (json.RawMessage, error) {
	if specFile != nil {
		if len(f.columns) > 0 || f.pk != "" || f.partitionBy != "" || len(f.options) > 0 || f.comment != "" || f.bucketKey != "" || f.buckets != 0 {
			return nil, errors.New("table create: --spec excludes --column, --pk, --partition-by, --option, --bucket-key, --buckets and --comment")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(specFile, &obj); err != nil {
			return nil, fmt.Errorf("table create: spec %s: %w", f.spec, err)
		}
		if f.name != "" {
			obj["table"], _ = json.Marshal(f.name)
		}
		if f.ifNotExists {
			obj["if_not_exists"] = json.RawMessage("true")
		}
		if _, ok := obj["table"]; !ok {
			return nil, fmt.Errorf("table create: spec %s names no table: add \"table\" or --name", f.spec)
		}
		return json.Marshal(obj)
	}
	if f.name == "" {
		return nil, errors.New("table create: give --spec FILE or a table name (--name T)")
	}
	if len(f.columns) == 0 {
		return nil, errors.New("table create: no columns: add --column name:TYPE for each")
	}
	spec := client.TableSpec{Table: f.name, PrimaryKey: splitList(f.pk), PartitionKeys: splitList(f.partitionBy), Comment: f.comment}
	for _, s := range f.columns {
		col, err := parseColumnFlag(s)
		if err != nil {
			return nil, err
		}
		spec.Columns = append(spec.Columns, col)
	}
	for _, kv := range f.options {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("table create: option %q: want key=value", kv)
		}
		if spec.Options == nil {
			spec.Options = map[string]string{}
		}
		spec.Options[strings.TrimSpace(k)] = v
	}
	if f.bucketKey != "" || f.buckets != 0 {
		if spec.Options == nil {
			spec.Options = map[string]string{}
		}
		if f.bucketKey != "" {
			spec.Options["bucket.key"] = strings.Join(splitList(f.bucketKey), ",")
		}
		if f.buckets != 0 {
			spec.Options["bucket.num"] = fmt.Sprint(f.buckets)
		}
	}
	body := struct {
		client.TableSpec
		IfNotExists bool `json:"if_not_exists,omitempty"`
	}{spec, f.ifNotExists}
	return json.Marshal(body)
}

// parseColumnFlag parses name:TYPE, name:TYPE:notnull or name:TYPE NOT NULL.
func parseColumnFlag(s string) (client.Column, error) {
	name, typ, ok := strings.Cut(s, ":")
	name, typ = strings.TrimSpace(name), strings.TrimSpace(typ)
	if !ok || name == "" || typ == "" {
		return client.Column{}, fmt.Errorf("column %q: want name:TYPE or name:TYPE:notnull", s)
	}
	col := client.Column{Name: name}
	lower := strings.ToLower(typ)
	for _, suffix := range []string{":notnull", ":not null", ":not_null", " not null"} {
		if strings.HasSuffix(lower, suffix) {
			col.Nullable = new(false)
			typ = strings.TrimSpace(typ[:len(typ)-len(suffix)])
			break
		}
	}
	if strings.HasSuffix(lower, ":null") {
		typ = strings.TrimSpace(typ[:len(typ)-len(":null")])
	}
	if typ == "" || strings.Contains(typ, ":") {
		return client.Column{}, fmt.Errorf("column %q: want name:TYPE or name:TYPE:notnull", s)
	}
	col.Type = typ
	return col, nil
}

func tableList(std stdio) *ff.Command {
	var conn connFlags
	var database string
	var asJSON bool
	fs := cli.NewFlagSet("list")
	conn.register(fs.FlagSet)
	fs.StringVar(&database, "database", "", "only this database's tables")
	fs.BoolVar(&asJSON, "json", false, "print the list-tables result as JSON")
	return &ff.Command{Name: "list", Usage: "fluxgate table list [--database D] [--json]", ShortHelp: "list the tables, of all databases or one", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) == 1 && database == "" {
				database = pos[0]
			} else if len(pos) > 0 {
				return fmt.Errorf("table list: unexpected arguments %q", pos)
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			body := map[string]any{}
			if database != "" {
				body["database"] = database
			}
			// Every page, as the server sent each table (the JSON keeps what
			// client.TableInfo does not know).
			raws := []json.RawMessage{}
			if err := c.ListPages(ctx, client.ActionListTables, body, "tables", func(t json.RawMessage) error {
				raws = append(raws, t)
				return nil
			}); err != nil {
				return err
			}
			if asJSON {
				return cli.WriteJSON(std.out, map[string]any{"tables": raws})
			}
			tables := make([]client.TableInfo, len(raws))
			for i, raw := range raws {
				if err := json.Unmarshal(raw, &tables[i]); err != nil {
					return fmt.Errorf("list-tables result: %w", err)
				}
			}
			return writeTableList(std.out, tables)

		}}
}

// writeTableList prints tables as an aligned text table, sorted by name.
func writeTableList(w io.Writer, tables []client.TableInfo) error {
	sort.Slice(tables, func(i, j int) bool { return tables[i].Table < tables[j].Table })
	rows := make([][]string, 0, len(tables))
	for _, t := range tables {
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name + " " + c.Type
		}
		rows = append(rows, []string{t.Table, orDash(t.Kind), orDash(t.Options["bucket.num"]),
			orDash(strings.Join(t.PrimaryKey, ",")), strings.Join(cols, ", ")})
	}
	return cli.WriteAligned(w, []string{"TABLE", "KIND", "BUCKETS", "PRIMARY KEY", "COLUMNS"}, rows)
}

func tableDescribe(std stdio) *ff.Command {
	var conn connFlags
	fs := cli.NewFlagSet("describe")
	conn.register(fs.FlagSet)
	return &ff.Command{Name: "describe", Usage: "fluxgate table describe T", ShortHelp: "print a table's definition as JSON", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) != 1 {
				return cli.UsageError(errors.New("want one table name"))
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			var raw json.RawMessage
			if err := c.Action(ctx, client.ActionDescribeTable, map[string]string{"table": pos[0]}, &raw); err != nil {
				return err
			}
			return cli.WriteJSON(std.out, raw)

		}}
}

// tableAlter changes options or adds (nullable) columns and prints the
// table's new TableInfo.
func tableAlter(std stdio) *ff.Command {
	var conn connFlags
	var set, reset, add multiFlag
	fs := cli.NewFlagSet("alter")
	conn.register(fs.FlagSet)
	fs.Var(&set, "set", "set an alterable option, k=v (repeatable)")
	fs.Var(&reset, "reset", "reset an option to its default (repeatable)")
	fs.Var(&add, "add-column", "add a nullable column at the end, name:TYPE (repeatable)")
	return &ff.Command{Name: "alter", Usage: "fluxgate table alter T [--set k=v ...] [--reset k ...] [--add-column name:TYPE ...]", ShortHelp: "set or reset options, or add nullable columns", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) != 1 || len(set)+len(reset)+len(add) == 0 {
				return cli.UsageError(errors.New("want one table name and something to change"))
			}
			req := client.AlterRequest{Table: pos[0], Reset: reset, Set: map[string]string{}}
			for _, kv := range set {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("--set %q: want k=v", kv)
				}
				req.Set[k] = v
			}
			for _, a := range add {
				col, err := parseColumnFlag(a)
				if err != nil {
					return err
				}
				req.AddColumns = append(req.AddColumns, col)
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			var raw json.RawMessage
			if err := c.Action(ctx, "alter-table", req, &raw); err != nil {
				return err
			}
			return cli.WriteJSON(std.out, raw)

		}}
}

func tableDrop(std stdio) *ff.Command {
	var conn connFlags
	var ifExists bool
	fs := cli.NewFlagSet("drop")
	conn.register(fs.FlagSet)
	fs.BoolVar(&ifExists, "if-exists", false, "succeed if the table does not exist")
	return &ff.Command{Name: "drop", Usage: "fluxgate table drop T [--if-exists]", ShortHelp: "drop a table and its data", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) != 1 {
				return cli.UsageError(errors.New("want one table name"))
			}
			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.DropTable(ctx, pos[0], ifExists); err != nil {
				return err
			}
			fmt.Fprintf(std.out, "dropped %s\n", pos[0])
			return nil

		}}
}

// readFileOrStdin reads a whole file; "-" is stdin.
func readFileOrStdin(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
