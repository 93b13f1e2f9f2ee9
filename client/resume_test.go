package client

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The shared vectors of a stream's end (protocol/testdata/resume.json,
// stream_ends): the status details that say the idle timeout ended it, and
// others that do not.
func TestEndedIdleVectors(t *testing.T) {
	b, err := os.ReadFile("../protocol/testdata/resume.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		StreamEnds []struct {
			Name    string `json:"name"`
			Details string `json:"details"`
			Idle    bool   `json:"idle"`
		} `json:"stream_ends"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.StreamEnds) == 0 {
		t.Fatal("resume.json has no stream_ends")
	}
	for _, c := range doc.StreamEnds {
		t.Run(c.Name, func(t *testing.T) {
			raw, err := hex.DecodeString(c.Details)
			if err != nil {
				t.Fatal(err)
			}
			var st spb.Status
			idle := false
			// Details that are not a google.rpc.Status: gRPC makes the
			// call's status INTERNAL.
			if proto.Unmarshal(raw, &st) == nil {
				idle = endedIdle(status.ErrorProto(&st))
			}
			if idle != c.Idle {
				t.Errorf("ended for the idle timeout: %v, want %v", idle, c.Idle)
			}
		})
	}
}
