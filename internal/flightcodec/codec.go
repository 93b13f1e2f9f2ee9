// Package flightcodec is gRPC's protobuf codec, except that it decodes
// FlightData itself: gRPC's codec copies a message into a pooled buffer and
// protobuf then copies the body out of it, while this one copies the message
// once, into memory of its own that data_body (and so a batch's Arrow
// buffers) then points into. The server receives DoPut and DoExchange
// batches with it, the client DoGet and DoExchange ones. It also encodes an
// Outgoing without copying its body, and says when gRPC is done with it:
// the server sends DoGet batches so.
package flightcodec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Codec is the codec; use it with grpc.ForceServerCodecV2 or
// grpc.ForceCodecV2.
type Codec struct{ encoding.CodecV2 }

// New returns the codec.
func New() Codec { return Codec{encoding.GetCodecV2("proto")} }

// Outgoing is FlightData to send (with the stream's SendMsg) whose body gRPC
// takes where it is instead of copying it: Free is called once gRPC has
// written the message, or dropped it with its stream, and not before. Until
// then the body must not change.
type Outgoing struct {
	*flight.FlightData
	Free func()
}

func (c Codec) Marshal(v any) (mem.BufferSlice, error) {
	if out, ok := v.(*Outgoing); ok {
		return marshalOutgoing(out)
	}
	return c.CodecV2.Marshal(v)
}

// marshalOutgoing encodes out as protobuf does FlightData: its fields in
// order, empty ones left out. The body is a buffer of its own, whose
// release frees out.
func marshalOutgoing(out *Outgoing) (mem.BufferSlice, error) {
	fd := out.FlightData
	var head []byte
	if fd.FlightDescriptor != nil {
		d, err := proto.Marshal(fd.FlightDescriptor)
		if err != nil {
			return nil, fmt.Errorf("FlightData descriptor: %w", err)
		}
		head = appendField(head, fieldDescriptor, d)
	}
	head = appendField(head, fieldDataHeader, fd.DataHeader)
	head = appendField(head, fieldAppMetadata, fd.AppMetadata)
	body := fd.DataBody
	if mem.IsBelowBufferPoolingThreshold(cap(body)) {
		// gRPC would keep a body this small as it is, without telling when
		// it is done with it: it goes in a copy.
		head = appendField(head, fieldDataBody, body)
		out.Free()
		return mem.BufferSlice{mem.SliceBuffer(head)}, nil
	}
	head = protowire.AppendTag(head, fieldDataBody, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(len(body)))
	return mem.BufferSlice{mem.SliceBuffer(head), mem.NewBuffer(&body, freeOnPut(out.Free))}, nil
}

func appendField(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// freeOnPut is the pool of an Outgoing's body: gRPC puts the body back once
// nothing refers to it.
type freeOnPut func()

func (freeOnPut) Get(int) *[]byte { panic("flightcodec: an Outgoing's body has no pool to get from") }
func (f freeOnPut) Put(*[]byte)   { f() }

func (c Codec) Unmarshal(data mem.BufferSlice, v any) error {
	fd, ok := v.(*flight.FlightData)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	return unmarshalFlightData(data.Materialize(), fd)
}

// Field numbers of FlightData (Flight.proto).
const (
	fieldDescriptor  = 1
	fieldDataHeader  = 2
	fieldAppMetadata = 3
	fieldDataBody    = 1000
)

// unmarshalFlightData decodes b into fd; the byte fields alias b.
func unmarshalFlightData(b []byte, fd *flight.FlightData) error {
	fd.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("FlightData: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType || (num != fieldDescriptor && num != fieldDataHeader && num != fieldAppMetadata && num != fieldDataBody) {
			// Not a field this decoder knows: skip it, as protobuf keeps
			// unknown fields out of the way.
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return fmt.Errorf("FlightData field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return fmt.Errorf("FlightData field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case fieldDescriptor:
			if fd.FlightDescriptor == nil {
				fd.FlightDescriptor = &flight.FlightDescriptor{}
			}
			// A message field that occurs twice is merged, as protobuf does.
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(v, fd.FlightDescriptor); err != nil {
				return fmt.Errorf("FlightData descriptor: %w", err)
			}
		case fieldDataHeader:
			fd.DataHeader = v
		case fieldAppMetadata:
			fd.AppMetadata = v
		case fieldDataBody:
			fd.DataBody = v
		}
	}
	return nil
}
