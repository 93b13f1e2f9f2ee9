package logstore

import "github.com/fluxgate-io/fluxgate/internal/ipcmsg"

// Message is an Arrow IPC record batch message with ZSTD buffer
// compression.
type Message struct {
	Meta     []byte   // flatbuffer metadata
	Body     [][]byte // the body, in pieces
	BodyLen  int      // bytes of Body
	RawBytes int      // bytes of the columns' buffers uncompressed
}

// Message returns columns of the frame (positions in the reader's
// projection, in the order given) as one message, without decompressing
// anything: the body's pieces reference the frame's bytes. ok is false when
// some column is not stored by buffer (frames of other codecs or written
// before, columns added after the frame).
func (f *Frame) Message(order []int) (msg Message, ok bool) {
	if !f.byBuffer {
		return Message{}, false
	}
	out := &ipcmsg.RecordBatch{Length: int64(f.Rows), Codec: ipcmsg.CodecZstd}
	pad := make([]byte, 8)
	for _, i := range order {
		if i < 0 || i >= len(f.cols) || f.rawLens[i] == missingColumn {
			return Message{}, false
		}
		layout, err := ipcmsg.Parse(f.metas[i])
		if err != nil || layout.Length != int64(f.Rows) || layout.BodyLength != int64(len(f.bodies[i])) {
			return Message{}, false
		}
		pieces := [][]byte{f.bodies[i]}
		switch layout.Codec {
		case ipcmsg.CodecZstd:
		case ipcmsg.CodecNone:
			// Stored raw because compression saved nothing: in a
			// compressed message its buffers say so by a -1 prefix.
			layout, pieces = layout.Compress(f.bodies[i], ipcmsg.CodecZstd, nil)
		default:
			return Message{}, false
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
		if f.rawLens[i] > 0 {
			msg.RawBytes += f.rawLens[i]
		} else {
			msg.RawBytes += len(f.bodies[i])
		}
	}
	msg.Meta, msg.BodyLen = out.Marshal(), int(out.BodyLength)
	return msg, true
}
