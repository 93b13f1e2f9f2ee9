package flightcodec

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// FuzzUnmarshalFlightData: this FlightData decoder reads every
// message exactly as protobuf does (and never panics on the rest).
func FuzzUnmarshalFlightData(f *testing.F) {
	whole, _ := proto.Marshal(&flight.FlightData{
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"fluss", "t"}},
		DataHeader:       []byte("header"), AppMetadata: []byte(`{"a":1}`), DataBody: bytes.Repeat([]byte{7}, 100),
	})
	f.Add(whole)
	// An unknown varint field, then the body twice (the last one wins) and
	// the descriptor twice (merged).
	msg := protowire.AppendTag(nil, 9, protowire.VarintType)
	msg = protowire.AppendVarint(msg, 300)
	for _, body := range []string{"first", "second"} {
		msg = protowire.AppendTag(msg, fieldDataBody, protowire.BytesType)
		msg = protowire.AppendBytes(msg, []byte(body))
	}
	for _, d := range []*flight.FlightDescriptor{{Type: flight.DescriptorCMD}, {Cmd: []byte("{}")}} {
		b, _ := proto.Marshal(d)
		msg = protowire.AppendTag(msg, fieldDescriptor, protowire.BytesType)
		msg = protowire.AppendBytes(msg, b)
	}
	f.Add(msg)
	f.Add([]byte{})
	f.Add([]byte{0x82, 0x3e}) // field 1000, bytes, length missing
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got flight.FlightData
		wantErr := proto.Unmarshal(b, &want)
		err := unmarshalFlightData(b, &got)
		if wantErr != nil {
			return // protobuf refuses it; whether this decoder does is its own business
		}
		if err != nil {
			t.Fatalf("protobuf decodes %x, this decoder fails: %v", b, err)
		}
		got.ProtoReflect().SetUnknown(nil)
		want.ProtoReflect().SetUnknown(nil)
		if !proto.Equal(&got, &want) {
			t.Fatalf("decoded %x as %v, protobuf as %v", b, &got, &want)
		}
	})
}
