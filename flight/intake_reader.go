package flight

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// intakeReader is arrow-go's flight.Reader over an intake's messages,
// except that it lets go of each message before it receives the next.
// arrow-go's keeps the last message until the next one has arrived, so a
// stream waiting for the write budget would keep its last batch in memory
// after that batch was acknowledged and its budget given back.
type intakeReader struct {
	*ipc.Reader
	msgs *messageReader
}

func newIntakeReader(src flight.DataStreamReader, opts ...ipc.Option) (*intakeReader, error) {
	// The first message carries the descriptor, and the schema unless it
	// comes alone (pyarrow's do_exchange opens with the descriptor alone).
	first, err := src.Recv()
	if err != nil {
		return nil, err
	}
	msgs := &messageReader{src: src, desc: first.FlightDescriptor}
	if len(first.DataHeader) > 0 {
		msgs.peeked = first
	}
	msgs.refs.Store(1)
	r, err := ipc.NewReaderFromMessageReader(msgs, opts...)
	if err != nil {
		msgs.Release()
		return nil, err
	}
	return &intakeReader{Reader: r, msgs: msgs}, nil
}

// LatestFlightDescriptor is the last descriptor the stream sent.
func (r *intakeReader) LatestFlightDescriptor() *flight.FlightDescriptor { return r.msgs.desc }

func (r *intakeReader) Release() {
	r.Reader.Release()
	r.msgs.Release()
}

// messageReader is the ipc.MessageReader of an intakeReader.
type messageReader struct {
	src    flight.DataStreamReader
	peeked *flight.FlightData // the first message, if it holds the schema
	msg    *ipc.Message
	desc   *flight.FlightDescriptor
	refs   atomic.Int64
}

func (m *messageReader) Message() (*ipc.Message, error) {
	m.drop()
	fd := m.peeked
	if fd != nil {
		m.peeked = nil
	} else {
		var err error
		if fd, err = m.src.Recv(); err != nil {
			return nil, err
		}
	}
	if fd.FlightDescriptor != nil {
		m.desc = fd.FlightDescriptor
	}
	m.msg = ipc.NewMessage(memory.NewBufferBytes(fd.DataHeader), memory.NewBufferBytes(fd.DataBody))
	return m.msg, nil
}

func (m *messageReader) drop() {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

func (m *messageReader) Retain() { m.refs.Add(1) }

func (m *messageReader) Release() {
	if m.refs.Add(-1) == 0 {
		m.drop()
	}
}
