// Package ipcmsgtest captures the Arrow IPC messages arrow-go's writer
// writes, for tests of what fluxgate reads or makes of them.
package ipcmsgtest

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Message is one IPC message as arrow-go wrote it.
type Message struct{ Meta, Body []byte }

// Write writes rec with arrow-go's IPC writer, with opts, and returns the
// schema and record batch messages.
func Write(t testing.TB, rec arrow.RecordBatch, opts ...ipc.Option) (schema, batch Message) {
	t.Helper()
	var pw payloads
	w := ipc.NewWriterWithPayloadWriter(&pw, append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(pw.msgs) != 2 {
		t.Fatalf("%d messages, want schema and batch", len(pw.msgs))
	}
	return pw.msgs[0], pw.msgs[1]
}

// payloads captures the messages an IPC writer writes.
type payloads struct{ msgs []Message }

func (p *payloads) Start() error { return nil }
func (p *payloads) Close() error { return nil }
func (p *payloads) WritePayload(pl ipc.Payload) error {
	meta := pl.Meta()
	defer meta.Release()
	var body bytes.Buffer
	if err := pl.SerializeBody(&body); err != nil {
		return err
	}
	p.msgs = append(p.msgs, Message{bytes.Clone(meta.Bytes()), body.Bytes()})
	return nil
}
