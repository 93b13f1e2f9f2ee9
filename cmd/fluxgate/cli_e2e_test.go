package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/internal/syncbuf"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// startTestServer runs `fluxgate serve` in-process on a free loopback port
// and returns its address once it answers.
func startTestServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// The directory is made before the cleanup below is registered, so that
	// it is removed only after the server has stopped.
	data := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, []string{"--data", data, "--listen", addr, "--http", "", "--log-level", "warn"})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := client.Dial(context.Background(), addr)
		if err == nil {
			_, err = c.ListDatabases(context.Background())
			c.Close()
		}
		if err == nil {
			return addr
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server at %s not ready: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run runs a client verb with its output captured.
func run(t *testing.T, main func(context.Context, []string, stdio) error, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := main(context.Background(), args, stdio{in: strings.NewReader(stdin), out: &out, err: &errOut})
	if errOut.Len() > 0 {
		t.Logf("stderr of %q: %s", args, errOut.String())
	}
	return out.String(), cliError(err)
}

// TestCLIAgainstServer drives table, put and scan against a real server.
func TestCLIAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := startTestServer(t)
	a := []string{"--addr", addr}

	out, err := run(t, tableMain, "", append([]string{"create", "fluss.orders", "--column", "id:BIGINT:notnull",
		"--column", "name:STRING", "--column", "amount:DECIMAL(10,2)", "--buckets", "2"}, a...)...)
	if err != nil || !strings.Contains(out, "created fluss.orders") {
		t.Fatalf("create: %q, %v", out, err)
	}
	if _, err := run(t, tableMain, "", append([]string{"create", "fluss.orders", "--column", "id:BIGINT"}, a...)...); status.Code(err) != codes.AlreadyExists ||
		!strings.HasPrefix(err.Error(), "ALREADY_EXISTS: ") {
		t.Errorf("second create: %v", err)
	}
	out, err = run(t, tableMain, "", append([]string{"list"}, a...)...)
	if err != nil || !strings.Contains(out, "fluss.orders") {
		t.Errorf("list: %q, %v", out, err)
	}
	out, err = run(t, tableMain, "", append([]string{"describe", "fluss.orders"}, a...)...)
	if err != nil || !strings.Contains(out, `"table_id"`) {
		t.Errorf("describe: %q, %v", out, err)
	}

	out, err = run(t, putMain, "id,name,amount\n1,a,1.50\n2,b,\n3,,3.00\n", append([]string{"--table", "fluss.orders", "--format", "csv", "--batch-rows", "2", "-"}, a...)...)
	if err != nil || !strings.Contains(out, "wrote 3 rows in 2 batches") {
		t.Fatalf("put: %q, %v", out, err)
	}
	out, err = run(t, putMain, `{"id": 4, "name": "d", "amount": "4.25"}`, append([]string{"--table", "fluss.orders", "--format", "jsonl", "-"}, a...)...)
	if err != nil || !strings.Contains(out, "wrote 1 row") {
		t.Fatalf("put jsonl: %q, %v", out, err)
	}
	if _, err := run(t, putMain, "id\n1\n", append([]string{"--table", "fluss.orders", "--format", "csv", "--mode", "upsert", "-"}, a...)...); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("upsert to a log table: %v", err)
	}

	out, err = run(t, scanMain, "", append([]string{"--table", "fluss.orders", "--format", "csv"}, a...)...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines[1:])
	if got, want := strings.Join(lines, "\n"), "id,name,amount\n1,a,1.50\n2,b,\n3,,3.00\n4,d,4.25"; got != want {
		t.Errorf("scan:\n%s\nwant:\n%s", got, want)
	}
	out, err = run(t, scanMain, "", append([]string{"fluss.orders", "--limit", "1", "--columns", "name"}, a...)...)
	if err != nil || !strings.Contains(out, "(1 row)") {
		t.Errorf("scan --limit: %q, %v", out, err)
	}

	// --follow: the scan streams until its context ends, which is a clean end.
	ctx, cancel := context.WithCancel(context.Background())
	followOut := &syncbuf.Buffer{}
	followDone := make(chan error, 1)
	go func() {
		followDone <- scanMain(ctx, append([]string{"--table", "fluss.orders", "--follow", "--startup", "earliest", "--format", "jsonl"}, a...),
			stdio{out: followOut, err: &bytes.Buffer{}})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(followOut.String(), "\n") < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := run(t, putMain, `{"id": 5}`, append([]string{"--table", "fluss.orders", "--format", "jsonl", "-"}, a...)...); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(followOut.String(), `"id":5`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-followDone; err != nil {
		t.Errorf("follow ended with %v", err)
	}
	if got := followOut.String(); strings.Count(got, "\n") != 5 || !strings.Contains(got, `{"id":5,"name":null,"amount":null}`) {
		t.Errorf("follow output:\n%s", got)
	}

	if _, err := run(t, tableMain, "", append([]string{"drop", "fluss.orders"}, a...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, scanMain, "", append([]string{"--table", "fluss.orders"}, a...)...); status.Code(err) != codes.NotFound ||
		!strings.HasPrefix(err.Error(), "NOT_FOUND: ") {
		t.Errorf("scan of a dropped table: %v", err)
	}
	if _, err := run(t, tableMain, "", append([]string{"drop", "fluss.orders", "--if-exists"}, a...)...); err != nil {
		t.Errorf("drop --if-exists: %v", err)
	}
}

// TestScanFollowLimit checks that scan --follow --limit N ends by itself
// after N rows read from every bucket, not from the first bucket alone.
func TestScanFollowLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := startTestServer(t)
	a := []string{"--addr", addr}
	if _, err := run(t, tableMain, "", append([]string{"create", "fluss.follow_limit", "--column", "id:BIGINT", "--buckets", "2", "--bucket-key", "id"}, a...)...); err != nil {
		t.Fatal(err)
	}
	const rows = 20
	var in strings.Builder
	for i := range rows {
		fmt.Fprintf(&in, "{\"id\": %d}\n", i)
	}
	if _, err := run(t, putMain, in.String(), append([]string{"--table", "fluss.follow_limit", "--format", "jsonl", "-"}, a...)...); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, scanMain, "", append([]string{"fluss.follow_limit", "--buckets", "0", "--format", "jsonl"}, a...)...)
	if n := strings.Count(out, "\n"); err != nil || n == 0 || n >= rows-1 {
		t.Fatalf("bucket 0 holds %d of %d rows (%v): the test needs rows in both buckets", n, rows, err)
	}
	// Without the limit the follow never ends; the deadline only ends a
	// test that fails.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = scanMain(ctx, append([]string{"fluss.follow_limit", "--follow", "--startup", "earliest", "--limit", strconv.Itoa(rows - 1), "--format", "jsonl"}, a...),
		stdio{out: &stdout, err: &stderr})
	if ctx.Err() != nil {
		t.Fatalf("scan --follow --limit %d did not end: %d rows, %q", rows-1, strings.Count(stdout.String(), "\n"), stderr.String())
	}
	if err != nil || strings.Count(stdout.String(), "\n") != rows-1 {
		t.Errorf("scan --follow --limit %d: %d rows, %v", rows-1, strings.Count(stdout.String(), "\n"), cliError(err))
	}
}

// TestLakeVerb tiers a lake-enabled table and shows its snapshot.
func TestLakeVerb(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	a := []string{"--addr", startTestServer(t)}
	if _, err := run(t, tableMain, "", append([]string{"create", "fluss.clicks", "--column", "page:STRING",
		"--option", "table.datalake.enabled=true"}, a...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, lakeMain, "", append([]string{"snapshot", "fluss.clicks"}, a...)...); status.Code(err) != codes.NotFound {
		t.Fatalf("lake snapshot before a round: %v, want NOT_FOUND", err)
	}
	if _, err := run(t, putMain, "page\nhome\ndocs\n", append([]string{"--table", "fluss.clicks", "--format", "csv", "-"}, a...)...); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, lakeMain, "", append([]string{"tier-now", "fluss.clicks"}, a...)...)
	if err != nil || !strings.Contains(out, `"offsets"`) || !strings.Contains(out, `"0": 2`) {
		t.Fatalf("lake tier-now: %v\n%s", err, out)
	}
	snap, err := run(t, lakeMain, "", append([]string{"snapshot", "fluss.clicks"}, a...)...)
	if err != nil || snap != out {
		t.Fatalf("lake snapshot = %s (%v), want what tier-now printed:\n%s", snap, err, out)
	}
	// The snapshot id printed exactly: 64 bits do not survive a float64.
	c, err := client.Dial(context.Background(), a[1])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exact, err := c.LakeSnapshot(context.Background(), "fluss.clicks")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var printed struct {
		SnapshotID json.Number `json:"snapshot_id"`
	}
	if err := dec.Decode(&printed); err != nil || printed.SnapshotID.String() != strconv.FormatInt(exact.SnapshotID, 10) {
		t.Fatalf("lake tier-now printed snapshot_id %s (%v), want %d", printed.SnapshotID, err, exact.SnapshotID)
	}
	out, err = run(t, scanMain, "", append([]string{"--table", "fluss.clicks$lake", "--columns", "page,__offset", "--format", "csv"}, a...)...)
	if err != nil || !strings.Contains(out, "home,0") || !strings.Contains(out, "docs,1") {
		t.Fatalf("scan fluss.clicks$lake: %v\n%s", err, out)
	}

	// lake compact: one round's file is already as compact as it gets.
	out, err = run(t, lakeMain, "", append([]string{"compact", "fluss.clicks"}, a...)...)
	if err != nil || !strings.Contains(out, `"rewritten_files": 0`) || !strings.Contains(out, `"0": 2`) {
		t.Fatalf("lake compact: %v\n%s", err, out)
	}

	// table alter: an option and a column.
	out, err = run(t, tableMain, "", append([]string{"alter", "fluss.clicks", "--set", "table.datalake.freshness=1h", "--add-column", "user:STRING"}, a...)...)
	if err != nil || !strings.Contains(out, `"1h"`) || !strings.Contains(out, `"user"`) {
		t.Fatalf("table alter: %v\n%s", err, out)
	}
	if _, err := run(t, tableMain, "", append([]string{"alter", "fluss.clicks", "--add-column", "x:INT:notnull"}, a...)...); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("table alter adding a NOT NULL column: %v, want INVALID_ARGUMENT", err)
	}
}

// TestDatabaseVerb creates, lists and drops a database.
func TestDatabaseVerb(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	a := []string{"--addr", startTestServer(t)}
	out, err := run(t, databaseMain, "", append([]string{"create", "analytics"}, a...)...)
	if err != nil || out != "created database analytics\n" {
		t.Fatalf("database create: %q, %v", out, err)
	}
	if _, err := run(t, databaseMain, "", append([]string{"create", "analytics"}, a...)...); status.Code(err) != codes.AlreadyExists {
		t.Errorf("second database create: %v, want ALREADY_EXISTS", err)
	}
	if _, err := run(t, databaseMain, "", append([]string{"create", "analytics", "--if-not-exists"}, a...)...); err != nil {
		t.Errorf("database create --if-not-exists: %v", err)
	}
	if out, err := run(t, databaseMain, "", append([]string{"list"}, a...)...); err != nil || out != "analytics\nfluss\n" {
		t.Errorf("database list: %q, %v", out, err)
	}
	if _, err := run(t, tableMain, "", append([]string{"create", "analytics.events", "--column", "id:BIGINT"}, a...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, databaseMain, "", append([]string{"drop", "analytics"}, a...)...); err == nil {
		t.Error("database drop of a database with a table, without --cascade: no error")
	}
	if out, err := run(t, databaseMain, "", append([]string{"drop", "analytics", "--cascade"}, a...)...); err != nil || out != "dropped database analytics\n" {
		t.Errorf("database drop --cascade: %q, %v", out, err)
	}
	if out, err := run(t, databaseMain, "", append([]string{"list", "--json"}, a...)...); err != nil || out != "{\n  \"databases\": [\n    \"fluss\"\n  ]\n}\n" {
		t.Errorf("database list --json: %q, %v", out, err)
	}
	if _, err := run(t, databaseMain, "", append([]string{"drop", "analytics"}, a...)...); status.Code(err) != codes.NotFound {
		t.Errorf("database drop of a dropped database: %v, want NOT_FOUND", err)
	}
	if _, err := run(t, databaseMain, "", append([]string{"drop", "analytics", "--if-exists"}, a...)...); err != nil {
		t.Errorf("database drop --if-exists: %v", err)
	}
}
