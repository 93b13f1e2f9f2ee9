package main

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestPartitionVerb creates a partitioned table and manages its partitions
// from the command line.
func TestPartitionVerb(t *testing.T) {
	a := []string{"--addr", startTestServer(t)}
	if _, err := run(t, tableMain, "", append([]string{"create", "events", "--column", "id:BIGINT", "--column", "dt:STRING", "--column", "region:STRING", "--partition-by", "dt,region"}, a...)...); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, partitionMain, "", append([]string{"create", "events", "dt=20261201", "region=eu"}, a...)...)
	if err != nil || out == "" {
		t.Fatalf("partition create: %q, %v", out, err)
	}
	if _, err := run(t, partitionMain, "", append([]string{"create", "events", "dt=20261201", "region=eu"}, a...)...); status.Code(err) != codes.AlreadyExists {
		t.Errorf("second partition create: %v, want ALREADY_EXISTS", err)
	}
	if _, err := run(t, partitionMain, "", append([]string{"create", "events", "dt=20261202", "region=us", "--if-not-exists"}, a...)...); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, partitionMain, "", append([]string{"list", "events", "region=us"}, a...)...); err != nil || !strings.Contains(out, "20261202$us") || strings.Contains(out, "20261201$eu") {
		t.Errorf("partition list region=us: %q, %v", out, err)
	}
	if out, err := run(t, partitionMain, "", append([]string{"drop", "events", "dt=20261201", "region=eu"}, a...)...); err != nil || out != "dropped partition dt=20261201 region=eu of events\n" {
		t.Errorf("partition drop: %q, %v", out, err)
	}
	if out, err := run(t, partitionMain, "", append([]string{"list", "events", "--json"}, a...)...); err != nil || strings.Contains(out, "20261201$eu") || !strings.Contains(out, `"partition_name": "20261202$us"`) {
		t.Errorf("partition list --json: %q, %v", out, err)
	}
	if _, err := run(t, partitionMain, "", append([]string{"create", "events"}, a...)...); err == nil {
		t.Error("partition create without values: no error")
	}
}
