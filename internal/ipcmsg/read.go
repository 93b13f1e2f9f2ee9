package ipcmsg

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Read decodes one record batch message, its metadata meta and its body,
// with arrow-go's IPC reader, given the schema message of its stream. The
// record may reference body.
func Read(schema *ipc.Message, meta []byte, body *memory.Buffer, mem memory.Allocator) (arrow.RecordBatch, error) {
	msg := ipc.NewMessage(memory.NewBufferBytes(meta), body)
	defer msg.Release()
	r, err := ipc.NewReaderFromMessageReader(&twoMessages{msgs: [2]*ipc.Message{schema, msg}}, ipc.WithAllocator(mem))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	rec, err := r.Read()
	if err != nil {
		return nil, err
	}
	rec.Retain()
	return rec, nil
}

// SchemaMessage returns the IPC schema message of schema.
func SchemaMessage(schema *arrow.Schema) *ipc.Message {
	// Garbage-collected memory: callers keep it for as long as they like.
	p := ipc.GetSchemaPayload(schema, memory.DefaultAllocator)
	defer p.Release()
	meta := p.Meta()
	defer meta.Release()
	return ipc.NewMessage(memory.NewBufferBytes(append([]byte(nil), meta.Bytes()...)), memory.NewBufferBytes(nil))
}

// twoMessages is an ipc.MessageReader over a schema message and one record
// batch message that the caller owns.
type twoMessages struct {
	msgs [2]*ipc.Message
	next int
}

func (m *twoMessages) Message() (*ipc.Message, error) {
	if m.next >= len(m.msgs) {
		return nil, io.EOF
	}
	msg := m.msgs[m.next]
	m.next++
	return msg, nil
}

func (m *twoMessages) Retain()  {}
func (m *twoMessages) Release() {}
