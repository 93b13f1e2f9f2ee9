package main

// fluxgate scan: read a table (or a view, t$changelog, t$lake) and print it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/peterbourgon/ff/v4"
)

const scanUsage = "scan --table T [--columns a,b] [--filter JSON] [--startup full|earliest|latest|TIMESTAMP_MS|OFFSETS_JSON] [--follow] [--limit N] [--format table|csv|jsonl|arrow] [--output FILE]"

// scanFlags are the flags of scan.
type scanFlags struct {
	table       string
	columns     string
	filter      string
	startup     string
	stop        string
	follow      bool
	limit       int64
	buckets     string
	format      string
	output      string
	compression string
}

func scanCommand(std stdio) *ff.Command {
	var f scanFlags
	var conn connFlags
	fs := cli.NewFlagSet("scan")
	conn.register(fs.FlagSet)
	fs.StringVar(&f.table, "table", "", "the table to read, database.table; t$changelog and t$lake read those views")
	fs.StringVar(&f.columns, "columns", "", "columns to read, comma-separated (default all)")
	fs.StringVar(&f.filter, "filter", "", `predicate as JSON, e.g. {"gt": ["amount", "100.00"]} (PROTOCOL.md §4.4)`)
	fs.StringVar(&f.startup, "startup", "", `where to start: full, earliest, latest, epoch milliseconds, or offsets as JSON {"0": 12} (default: the server's)`)
	fs.StringVar(&f.stop, "stop", "", `where to stop: latest, none, or offsets as JSON (default latest)`)
	fs.BoolVar(&f.follow, "follow", false, "keep reading new rows until interrupted (stop none)")
	fs.Int64Var(&f.limit, "limit", 0, "read at most this many rows (0: no limit)")
	fs.StringVar(&f.buckets, "buckets", "", "read only these buckets, comma-separated")
	fs.StringVar(&f.format, "format", "table", "output format: table, csv, jsonl or arrow (Arrow IPC stream)")
	fs.StringVar(&f.output, "output", "", "write to this file instead of stdout")
	fs.StringVar(&f.compression, "compression", "", "IPC compression of the batches the server sends: none, lz4_frame or zstd")
	return &ff.Command{Name: "scan", Usage: "fluxgate " + scanUsage, ShortHelp: "read a table: print it, or follow it as it grows", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) == 1 && f.table == "" {
				f.table = pos[0]
			} else if len(pos) > 0 {
				return cli.UsageError(fmt.Errorf("unexpected arguments %q", pos))
			}
			req, err := scanRequest(f)
			if err != nil {
				return err
			}
			// The server refuses a limit on a follow (PROTOCOL.md §4): a follow's
			// rows are counted here, across all its buckets.
			var followLimit int64
			if req.Stop.IsUnbounded() && req.Limit != nil {
				followLimit, req.Limit = *req.Limit, nil
			}
			if err := checkOutputFormat(f.format); err != nil {
				return err
			}

			c, err := conn.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			var out io.Writer = std.out
			if f.output != "" && f.output != "-" {
				file, err := os.Create(f.output)
				if err != nil {
					return err
				}
				defer file.Close()
				out = file
			}
			s, err := c.Scan(ctx, req)
			if err != nil {
				return err
			}
			defer s.Release()
			n, err := copyRecords(ctx, s, out, f.format, req.Stop.IsUnbounded(), followLimit, c.Allocator())
			if err != nil {
				return err
			}
			if f.output != "" && f.output != "-" {
				fmt.Fprintf(std.err, "wrote %d rows to %s\n", n, f.output)
			}
			return nil

		}}
}

// scanRequest builds the ScanRequest the flags describe.
func scanRequest(f scanFlags) (client.ScanRequest, error) {
	req := client.ScanRequest{Table: f.table, Columns: splitList(f.columns), Compression: f.compression}
	if f.limit > 0 {
		req.Limit = &f.limit
	}
	if req.Table == "" {
		return req, errors.New("--table is required")
	}
	if f.limit < 0 {
		return req, errors.New("--limit must not be negative")
	}
	if f.filter != "" {
		if !json.Valid([]byte(f.filter)) {
			return req, fmt.Errorf("--filter is not valid JSON: %s", f.filter)
		}
		req.Filter = json.RawMessage(f.filter)
	}
	var err error
	if req.Startup, err = client.ParsePosition(f.startup); err != nil {
		return req, fmt.Errorf("--startup: %w", err)
	}
	if req.Stop, err = client.ParsePosition(f.stop); err != nil {
		return req, fmt.Errorf("--stop: %w", err)
	}
	if f.follow {
		if f.stop != "" && !req.Stop.IsUnbounded() {
			return req, errors.New("--follow and --stop exclude each other")
		}
		req.Stop = client.Unbounded
	}
	for _, b := range splitList(f.buckets) {
		n, err := strconv.Atoi(b)
		if err != nil || n < 0 {
			return req, fmt.Errorf("--buckets: %q is not a bucket number", b)
		}
		req.Buckets = append(req.Buckets, n)
	}
	return req, nil
}

// copyRecords writes every batch of s to out in format and returns the rows
// written; a limit above 0 stops it after that many. When following, each
// batch is flushed as it comes, and the end of ctx (Ctrl-C) is a clean end.
func copyRecords(ctx context.Context, s client.RecordStream, out io.Writer, format string, follow bool, limit int64, mem memory.Allocator) (int64, error) {
	var (
		rw   recordWriter
		rows int64
		err  error
	)
	open := func() error {
		if rw != nil {
			return nil
		}
		schema := s.Schema()
		if rec := s.RecordBatch(); rec != nil {
			schema = rec.Schema()
		}
		if schema == nil {
			return nil
		}
		rw, err = newRecordWriter(format, out, schema, mem)
		return err
	}
	for (limit <= 0 || rows < limit) && s.Next() {
		rec := s.RecordBatch()
		if rec.NumRows() == 0 {
			continue // a batch that only advances offsets
		}
		if err := open(); err != nil {
			return rows, err
		}
		if limit > 0 && rows+rec.NumRows() > limit {
			rec = rec.NewSlice(0, limit-rows)
			defer rec.Release()
		}
		if err := rw.Write(rec); err != nil {
			return rows, err
		}
		rows += rec.NumRows()
		if follow {
			if err := rw.Flush(); err != nil {
				return rows, err
			}
		}
	}
	scanErr := s.Err()
	if scanErr != nil && ctx.Err() != nil {
		scanErr = nil // interrupted: a clean end
	}
	if err := open(); err != nil && scanErr == nil {
		scanErr = err
	}
	if rw != nil {
		if err := rw.Close(); err != nil && scanErr == nil {
			scanErr = err
		}
	}
	return rows, scanErr
}
