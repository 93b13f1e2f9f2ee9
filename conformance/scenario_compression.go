package conformance

// scan-compression: PROTOCOL.md §4.2 "compression". A ZSTD table (the
// default) read asking for no compression (batches as stored, the
// default), for ZSTD batches, which the server sends as stored, or for LZ4
// ones, gives what the "none" read gives: every column, a projection, and
// the changelog's system columns.

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
)

func scanCompression(ctx context.Context, env *Env) error {
	table := env.Table("compression")
	if _, err := createTable(ctx, env, simpleSpec(table, 2, true)); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 1000), idRange(1000, 1000), idRange(2000, 500)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	for _, req := range []client.ScanRequest{
		{Table: table},
		{Table: table, Columns: []string{"score", "id"}},
		{Table: table + "$changelog", Columns: []string{"_change_type", "id", "_log_offset", "_commit_timestamp", "name"}},
	} {
		req.Compression = "none"
		plain, _, err := readBuckets(ctx, env, req)
		if err != nil {
			return fmt.Errorf("read %s %v: %w", req.Table, req.Columns, err)
		}
		for _, compression := range []string{"", "zstd", "lz4_frame"} {
			req.Compression = compression
			got, _, err := readBuckets(ctx, env, req)
			if err != nil {
				releaseMap(plain)
				return fmt.Errorf("read %s %v, %s batches: %w", req.Table, req.Columns, compression, err)
			}
			for _, b := range sortedKeys(plain, got) {
				if plain[b] == nil || got[b] == nil || !array.RecordEqual(plain[b], got[b]) {
					releaseMap(plain)
					releaseMap(got)
					return fmt.Errorf("read %s %v, bucket %d: %s batches differ from uncompressed ones", req.Table, req.Columns, b, compression)
				}
			}
			releaseMap(got)
		}
		releaseMap(plain)
	}
	return nil
}
