package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestGrantVerbs(t *testing.T) {
	srv := startAuthServer(t, "--users", writeTokenUsers(t, "root", "reader"))
	ctx := context.Background()
	run := func(f func(context.Context, []string, stdio) error, args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := f(ctx, append(args, "--addr", srv.FlightAddr(), "--token", "root-token"), stdio{out: &out, err: &errOut})
		return out.String(), err
	}
	grant := func(ctx context.Context, args []string, std stdio) error { return grantMain(ctx, "grant", args, std) }
	revoke := func(ctx context.Context, args []string, std stdio) error { return grantMain(ctx, "revoke", args, std) }
	if _, err := run(grant, "reader", "read,write", "on", "fluss.orders"); err != nil {
		t.Fatal(err)
	}
	out, err := run(grantsMain, "reader")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"reader"`, `"orders"`, `"read"`, `"write"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("grants output lacks %s:\n%s", want, out)
		}
	}
	if _, err := run(revoke, "reader", "read,write", "on", "fluss.orders"); err != nil {
		t.Fatal(err)
	}
	if out, _ := run(grantsMain, "reader"); strings.Contains(out, `"orders"`) {
		t.Fatalf("the revoked grant is still listed:\n%s", out)
	}
	if _, err := run(grant, "reader", "read", "to", "fluss"); err == nil {
		t.Fatal("a malformed grant was accepted")
	}
}
