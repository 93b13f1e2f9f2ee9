package logstore

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// Message is an Arrow IPC record batch message with the buffer compression
// (ZSTD or LZ4 frames) of the frame it was made of.
type Message struct {
	Meta     []byte   // flatbuffer metadata
	Body     [][]byte // the body, in pieces
	BodyLen  int      // bytes of Body
	RawBytes int      // bytes of the columns' buffers uncompressed
}

// MessageColumn is one column of a frame's message: the column at position
// Stored of the reader's projection, as the frame stores it, or, when Made
// is set, a column the caller made up for the frame's rows (of a flat type:
// fixed width, boolean, string or binary), sent uncompressed.
type MessageColumn struct {
	Stored int
	Made   arrow.Array
}

// Message returns the columns cols of the frame as one message, without
// decompressing anything: the body's pieces reference the frame's bytes
// (and copies of the made columns). ok is false when a stored column is not
// compressed by buffer (frames of other codecs or written before, columns
// added after the frame) or a made column is not flat.
func (f *Frame) Message(cols []MessageColumn) (msg Message, ok bool) {
	if !f.byBuffer {
		return Message{}, false
	}
	codec := f.codec.ipc()
	out := &ipcmsg.RecordBatch{Length: int64(f.Rows), Codec: codec}
	pad := make([]byte, 8)
	for _, c := range cols {
		var layout *ipcmsg.RecordBatch
		var pieces [][]byte
		var raw int
		if c.Made != nil {
			if layout, pieces, ok = f.madeColumn(c.Made); !ok {
				return Message{}, false
			}
			raw = int(layout.BodyLength)
		} else {
			if layout, pieces, ok = f.storedColumn(c.Stored, codec); !ok {
				return Message{}, false
			}
			if raw = f.rawLens[c.Stored]; raw == 0 {
				raw = len(f.bodies[c.Stored]) // stored raw
			}
		}
		if layout.Codec == ipcmsg.CodecNone {
			// Stored raw because compression saved nothing, or made up:
			// in a compressed message its buffers say so by a -1 prefix.
			layout, pieces = layout.Compress(joined(pieces), codec, nil)
		}
		for _, b := range layout.Buffers {
			out.Buffers = append(out.Buffers, ipcmsg.Buffer{Offset: out.BodyLength + b.Offset, Length: b.Length})
		}
		out.Nodes = append(out.Nodes, layout.Nodes...)
		out.Variadic = append(out.Variadic, layout.Variadic...)
		msg.Body = append(msg.Body, pieces...)
		out.BodyLength += layout.BodyLength
		if n := int(out.BodyLength % 8); n != 0 {
			msg.Body = append(msg.Body, pad[:8-n])
			out.BodyLength += int64(8 - n)
		}
		msg.RawBytes += raw
	}
	msg.Meta, msg.BodyLen = out.Marshal(), int(out.BodyLength)
	return msg, true
}

// storedColumn returns the layout and body of the column at position i of
// the projection, as stored: compressed with codec, or not at all.
func (f *Frame) storedColumn(i int, codec ipcmsg.Codec) (*ipcmsg.RecordBatch, [][]byte, bool) {
	if i < 0 || i >= len(f.cols) || f.rawLens[i] == missingColumn {
		return nil, nil, false
	}
	layout, err := ipcmsg.Parse(f.metas[i])
	if err != nil || layout.Length != int64(f.Rows) || layout.BodyLength != int64(len(f.bodies[i])) {
		return nil, nil, false
	}
	if layout.Codec != codec && layout.Codec != ipcmsg.CodecNone {
		return nil, nil, false
	}
	return layout, [][]byte{f.bodies[i]}, true
}

// madeColumn returns the uncompressed layout of a made-up column and a copy
// of its buffers.
func (f *Frame) madeColumn(a arrow.Array) (*ipcmsg.RecordBatch, [][]byte, bool) {
	data := a.Data()
	if _, ok := flatLayout(a.DataType()); !ok || data.Offset() != 0 || a.Len() != f.Rows {
		return nil, nil, false
	}
	layout := &ipcmsg.RecordBatch{Length: int64(a.Len()), Codec: ipcmsg.CodecNone,
		Nodes: []ipcmsg.Node{{Length: int64(a.Len()), NullCount: int64(a.NullN())}}}
	var body []byte
	for k, b := range data.Buffers() {
		var bytes []byte
		if b != nil && (k > 0 || a.NullN() > 0) {
			bytes = b.Bytes()
		}
		layout.Buffers = append(layout.Buffers, ipcmsg.Buffer{Offset: int64(len(body)), Length: int64(len(bytes))})
		body = append(body, bytes...)
		body = append(body, make([]byte, align8(len(body))-len(body))...)
	}
	layout.BodyLength = int64(len(body))
	return layout, [][]byte{body}, true
}

// joined returns pieces as one slice, copying only when there are several.
func joined(pieces [][]byte) []byte {
	if len(pieces) == 1 {
		return pieces[0]
	}
	var out []byte
	for _, p := range pieces {
		out = append(out, p...)
	}
	return out
}
