package logstore

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// Received is a record batch as a writer sent it, its buffers compressed
// by Arrow IPC's BUFFER method with ZSTD or LZ4 frames: what a table of
// that codec stores. An Encoder of the same codec stores its columns as
// received, without compressing them again (EncodeReceived); the caller has
// decoded and checked the batch, and computed its statistics, from the same
// bytes.
type Received struct {
	codec ipcmsg.Codec
	cols  []receivedColumn // per column of the batch; nil layout: not storable as received
}

// receivedColumn is one column of a received batch, cut out as a frame
// stores a column: its metadata alone, offsets from the start of its body.
type receivedColumn struct {
	layout *ipcmsg.RecordBatch
	body   []byte
	raw    int // bytes of its buffers uncompressed
}

// NewReceived cuts the columns of a received batch (its metadata and body)
// of schema apart. It returns nil when the batch is not compressed with
// ZSTD or LZ4 frames or no column can be stored as received: all columns
// must be flat (so that their buffers are known from their types), and a
// column is stored as received when its buffers are 8-byte aligned.
func NewReceived(schema *arrow.Schema, meta *ipcmsg.RecordBatch, body []byte) *Received {
	if meta.Codec != ipcmsg.CodecZstd && meta.Codec != ipcmsg.CodecLZ4Frame || int64(len(body)) < meta.BodyLength {
		return nil
	}
	if len(meta.Nodes) != schema.NumFields() {
		return nil // nested columns: their buffers are not counted here
	}
	r := &Received{codec: meta.Codec, cols: make([]receivedColumn, schema.NumFields())}
	found, buf := false, 0
	for i, f := range schema.Fields() {
		lens, ok := flatLayout(f.Type)
		if !ok || f.Type.ID() == arrow.NULL {
			return nil
		}
		n := len(lens(0))
		if buf+n > len(meta.Buffers) {
			return nil
		}
		r.cols[i] = receivedColumnOf(meta, meta.Nodes[i], meta.Buffers[buf:buf+n], body)
		found = found || r.cols[i].layout != nil
		buf += n
	}
	if !found || buf != len(meta.Buffers) {
		return nil
	}
	return r
}

// receivedColumnOf cuts the column of node and bufs out of a batch.
func receivedColumnOf(meta *ipcmsg.RecordBatch, node ipcmsg.Node, bufs []ipcmsg.Buffer, body []byte) receivedColumn {
	start, end := int64(-1), int64(0)
	for _, b := range bufs {
		if b.Length == 0 {
			continue
		}
		if b.Offset%8 != 0 {
			return receivedColumn{}
		}
		if start < 0 || b.Offset < start {
			start = b.Offset
		}
		end = max(end, b.Offset+b.Length)
	}
	if start < 0 || node.Length != meta.Length {
		return receivedColumn{}
	}
	end = min(int64(align8(int(end))), int64(len(body)))
	col := &ipcmsg.RecordBatch{Length: meta.Length, Nodes: []ipcmsg.Node{node}, Codec: meta.Codec, BodyLength: end - start}
	for _, b := range bufs {
		if b.Length == 0 {
			col.Buffers = append(col.Buffers, ipcmsg.Buffer{})
			continue
		}
		col.Buffers = append(col.Buffers, ipcmsg.Buffer{Offset: b.Offset - start, Length: b.Length})
	}
	raw, err := col.UncompressedBytes(body[start:end])
	if err != nil || raw == 0 {
		return receivedColumn{}
	}
	return receivedColumn{layout: col, body: body[start:end], raw: int(raw)}
}

// column returns column i of the batch, if it can be stored as received.
func (r *Received) column(i int) (receivedColumn, bool) {
	if r == nil || i < 0 || i >= len(r.cols) || r.cols[i].layout == nil {
		return receivedColumn{}, false
	}
	return r.cols[i], true
}
