// Package ipcmsgtest captures the Arrow IPC messages arrow-go's writer
// writes, for tests of what fluxgate reads or makes of them.
package ipcmsgtest

import (
	"bytes"
	"encoding/binary"
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

// ZstdFrameClaiming is a ZSTD frame of content (at most 2 MiB, stored as
// one raw block) whose header claims a content size of claim bytes.
func ZstdFrameClaiming(claim uint64, content []byte) []byte {
	frame := []byte{0x28, 0xB5, 0x2F, 0xFD, 0xC0, 0x00} // magic; an 8-byte content size; a 1 KiB window
	frame = binary.LittleEndian.AppendUint64(frame, claim)
	block := uint32(len(content))<<3 | 1 // raw, the last
	frame = append(frame, byte(block), byte(block>>8), byte(block>>16))
	return append(frame, content...)
}
