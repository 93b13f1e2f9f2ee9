package main

// fluxgate repair --data DIR --table DB.T --truncate-at FILE:BYTE: cut a
// corrupt table log where the server said, with the server stopped
// (docs/operations.md, "Corruption and repair"). Nothing is deleted: what is
// cut goes to <data>/quarantine/<time>-repair-<table id>.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/cli"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/peterbourgon/ff/v4"
)

func repairCommand(std stdio) *ff.Command {
	fs := cli.NewFlagSet("repair")
	data := fs.String("data", "./fluxgate-data", "data directory of the stopped server")
	table := fs.String("table", "", "the table whose log to cut")
	at := fs.String("truncate-at", "", "segment file and byte to cut its bucket's log at, as the server's corruption message names them")
	dryRun := fs.Bool("dry-run", false, "print what would be cut and change nothing")
	return &ff.Command{Name: "repair", Usage: "fluxgate repair --data DIR --table DATABASE.TABLE --truncate-at FILE:BYTE [--dry-run]", ShortHelp: "cut a corrupt table log where the server says, with the server stopped", Flags: fs,
		Exec: func(ctx context.Context, pos []string) error {
			if len(pos) > 0 || *table == "" || *at == "" {
				return cli.UsageError(errors.New("want --table and --truncate-at, and no arguments"))
			}
			file, byteAt, err := parseCut(*at)
			if err != nil {
				return err
			}
			path, err := protocol.ParseTablePath(*table)
			if err != nil {
				return err
			}

			// The catalog's lock (pebble's, on <data>/catalog) keeps a server from
			// starting, or this from running beside one, while the log is cut.
			cat, err := catalog.Open(filepath.Join(*data, "catalog"), catalog.Options{ReadOnly: true})
			if errs.Is(err, errs.NotFound) {
				return fmt.Errorf("%w: is --data the server's data directory?", err)
			}
			if err != nil {
				return fmt.Errorf("%w (the server must be stopped first)", err)
			}
			defer cat.Close()
			info, err := cat.Table(path)
			if err != nil {
				return err
			}
			if info.DatalakeEnabled() {
				return fmt.Errorf("%s is lake-enabled: its lake copy may hold offsets past the cut, and repairing that is not supported yet; restore the table from a backup, or drop it", path)
			}
			dir := filepath.Join(*data, "tables", strconv.FormatInt(info.TableID, 10))
			plan, err := logstore.PlanRepair(dir, info.BucketCount(), file, byteAt)
			if err != nil {
				return err
			}
			var state *kv.Store
			if info.IsPrimaryKey() {
				if state, err = openStateToReset(*data, info.TableID, plan); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
			}
			if state != nil {
				defer state.Close()
			}
			dest := filepath.Join(*data, engine.QuarantineDir, fmt.Sprintf("%s-repair-%d", time.Now().UTC().Format("20060102T150405Z"), info.TableID))
			printPlan(std, path, info.TableID, plan, dest)
			if state != nil {
				fmt.Fprintf(std.out, "  reset the primary-key state of bucket %d: the next start rebuilds it from the changelog kept\n", plan.Bucket)
			}
			if *dryRun {
				fmt.Fprintln(std.out, "dry run: nothing changed")
				return nil
			}
			if err := plan.Apply(dest); err != nil {
				return fmt.Errorf("repair %s: %w (what was moved is in %s)", path, err, dest)
			}
			if state != nil {
				if err := state.ResetBucket(info.TableID, plan.Bucket); err != nil {
					return fmt.Errorf("repair %s: the log is cut, but resetting the state failed (run the same repair again): %w", path, err)
				}
			}
			fmt.Fprintf(std.out, "repaired: bucket %d of %s now ends at offset %d; start the server\n", plan.Bucket, path, plan.KeptEnd)
			return nil

		}}
}

// openStateToReset returns the primary-key state store when the state of the
// plan's bucket was applied past the cut (it holds rows of cut frames) and
// must be rebuilt from the log, nil when it is not ahead; an error when the
// bucket's changelog no longer starts at offset 0, so that it cannot be.
func openStateToReset(data string, table int64, plan *logstore.RepairPlan) (*kv.Store, error) {
	state, err := kv.Open(filepath.Join(data, "kv"), kv.Options{CacheBytes: 8 << 20})
	if err != nil {
		return nil, fmt.Errorf("%w (the server must be stopped first)", err)
	}
	applied, err := state.Applied(table, plan.Bucket)
	switch {
	case err != nil:
	case applied <= plan.KeptEnd:
		return nil, state.Close()
	case plan.Earliest > 0:
		err = fmt.Errorf("the state of bucket %d holds changes up to offset %d, past the cut at %d, and the changelog before offset %d has expired, so the state cannot be rebuilt: restore the table from a backup, or drop it", plan.Bucket, applied, plan.KeptEnd, plan.Earliest)
	default:
		return state, nil
	}
	return nil, errors.Join(err, state.Close())
}

// parseCut splits FILE:BYTE; FILE is made absolute.
func parseCut(s string) (string, int64, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", 0, fmt.Errorf("--truncate-at %q: want FILE:BYTE", s)
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || n < 0 {
		return "", 0, fmt.Errorf("--truncate-at %q: %q is not a byte position", s, s[i+1:])
	}
	file, err := filepath.Abs(s[:i])
	return file, n, err
}

func printPlan(std stdio, table protocol.TablePath, id int64, p *logstore.RepairPlan, dest string) {
	w := std.out
	fmt.Fprintf(w, "table %s (id %d), bucket %d:\n", table, id, p.Bucket)
	fmt.Fprintf(w, "  keep  %s bytes [0, %d): %d frames; the bucket's log ends at offset %d\n", p.Segment, p.Pos, p.Frames, p.KeptEnd)
	fmt.Fprintf(w, "  cut   %s bytes [%d, %d) (%d bytes)\n", p.Segment, p.Pos, p.Size, p.Size-p.Pos)
	for _, seg := range p.Newer {
		fmt.Fprintf(w, "  cut   %s (a newer segment, whole)\n", seg)
	}
	if p.Writers != "" {
		fmt.Fprintf(w, "  move  %s (rebuilt from the log on the next start)\n", p.Writers)
	}
	fmt.Fprintf(w, "what is cut is moved to %s\n", dest)
	fmt.Fprintln(w, "rows that the cut writes put in other buckets stay there; an idempotent writer's cut batches are forgotten, so a retry of one is written anew")
}
