package flight_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/pierrec/lz4/v4"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// An LZ4 frame that one of Arrow's readers refuses is refused at intake,
// INVALID_ARGUMENT naming the batch and the column, and nothing of its batch
// is stored: an LZ4 table stores frames as received, so a frame let through
// would be served to every reader as it is. (Each check of a frame is
// tested in internal/ipcmsg; these are through the server.)
func TestForgedLZ4FramesAreRefused(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	spec := ordersSpec("lz4_orders", 1, "")
	spec.Options["table.log.arrow.compression.type"] = "lz4_frame"
	if _, err := ts.cl.CreateTable(ctx, spec, false); err != nil {
		t.Fatal(err)
	}
	cl := rawClient(t, ts)
	schema, valid, _ := craftedOrders(t, ts.mem)
	good := valid[0] // uncompressed
	_, arrowLZ4 := clientMessages(t, ordersRecord(t, ts.mem), ipc.WithLZ4())
	if err := putRaw(ctx, cl, `{"write":{"table":"lz4_orders"}}`, schema, arrowLZ4); err != nil {
		t.Fatalf("arrow-go's LZ4 batch (pierrec's frames, with content checksums): %v", err)
	}
	const item = 4 // the item column's data buffer
	for _, tc := range []struct {
		name, says string
		frame      func(data []byte) []byte
	}{
		{"two frames", "after the end of the frame", func(d []byte) []byte {
			return slices.Concat(ipcmsg.AppendLZ4Frame(nil, d[:5]), ipcmsg.AppendLZ4Frame(nil, d[5:]))
		}},
		{"bytes after the frame", "after the end of the frame", func(d []byte) []byte { return append(ipcmsg.AppendLZ4Frame(nil, d), 0) }},
		{"header checksum", "header checksum", func(d []byte) []byte {
			f := ipcmsg.AppendLZ4Frame(nil, d)
			f[6] ^= 1
			return f
		}},
		{"content checksum", "content checksum", func(d []byte) []byte {
			f := pierrecLZ4(t, d, lz4.ChecksumOption(true))
			f[len(f)-1] ^= 1
			return f
		}},
		{"block checksum", "block checksum", func(d []byte) []byte {
			f := pierrecLZ4(t, d, lz4.ChecksumOption(false), lz4.BlockChecksumOption(true))
			f[len(f)-5] ^= 1 // the last 8 bytes: the block's checksum, the end mark
			return f
		}},
		{"content size", "content size", func(d []byte) []byte { return pierrecLZ4(t, d, lz4.SizeOption(uint64(len(d)+1))) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batch := compressedBatch(t, good, ipcmsg.CodecLZ4Frame, item, tc.frame)
			err := putRaw(ctx, cl, `{"write":{"table":"lz4_orders"}}`, schema, batch)
			wantInvalid(t, "DoPut", err, "compressed batch 0 is malformed: column 1 (item)", tc.says)
			if got := ids(t, ts, client.ScanRequest{Table: "lz4_orders"}); len(got) != 10 {
				t.Fatalf("read %d rows after the refused batch, want the 10 before it", len(got))
			}
		})
	}
	// The same edit with a sound frame is stored: the test's batches are
	// refused for their frames alone.
	sound := compressedBatch(t, good, ipcmsg.CodecLZ4Frame, item, func(d []byte) []byte { return pierrecLZ4(t, d, lz4.BlockChecksumOption(true)) })
	if err := putRaw(ctx, cl, `{"write":{"table":"lz4_orders"}}`, schema, valid[0], sound); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ts, client.ScanRequest{Table: "lz4_orders", Compression: "lz4_frame"}); len(got) != 30 {
		t.Fatalf("read %d rows, want 30", len(got))
	}
}

// pierrecLZ4 is data as one frame of pierrec's writer with opts.
func pierrecLZ4(t *testing.T, data []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var out bytes.Buffer
	w := lz4.NewWriter(&out)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
