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

// An Outgoing encodes as protobuf encodes its FlightData, with the body
// where it is, not copied; Free is called once, when gRPC releases the
// encoding. A body too small for gRPC to tell its release goes in a copy,
// and is freed at once.
func TestMarshalOutgoing(t *testing.T) {
	for _, bodyBytes := range []int{0, 10, 1 << 20} {
		fd := &flight.FlightData{
			FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("{}")},
			DataHeader:       []byte("header"), AppMetadata: []byte(`{"a":1}`), DataBody: bytes.Repeat([]byte{7}, bodyBytes),
		}
		freed := 0
		enc, err := New().Marshal(&Outgoing{FlightData: fd, Free: func() { freed++ }})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := proto.Marshal(fd)
		if got := enc.Materialize(); !bytes.Equal(got, want) {
			t.Fatalf("%d-byte body: encoded %x, protobuf %x", bodyBytes, got, want)
		}
		copied := true
		for _, b := range enc {
			if bodyBytes > 0 && &b.ReadOnlyData()[0] == &fd.DataBody[0] {
				copied = false
			}
		}
		big := bodyBytes > 1024
		if copied == big {
			t.Fatalf("%d-byte body: copied %v", bodyBytes, copied)
		}
		if wantFreed := map[bool]int{true: 0, false: 1}[big]; freed != wantFreed {
			t.Fatalf("%d-byte body: freed %d times before gRPC released it, want %d", bodyBytes, freed, wantFreed)
		}
		enc.Free()
		if freed != 1 {
			t.Fatalf("%d-byte body: freed %d times, want once", bodyBytes, freed)
		}
	}
}
