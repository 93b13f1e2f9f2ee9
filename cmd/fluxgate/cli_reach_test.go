package main

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestUnreachableServer checks that a client verb run against an address
// nothing listens on says so, and how to point it elsewhere, for unary RPCs
// (scan's plan) and streams (table list's action) alike.
func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	want := "cannot reach fluxgate at " + addr + " (connection refused): is the server running? set --addr or FLUXGATE_ADDR"
	for name, verb := range map[string]func() error{
		"table list": func() error { _, err := run(t, tableMain, "", "list", "--addr", addr); return err },
		"scan": func() error {
			_, err := run(t, scanMain, "", "--table", "fluss.t", "--addr", "grpc://"+addr)
			return err
		},
	} {
		err := verb()
		var unreachable *unreachableError
		if err == nil || !errors.As(err, &unreachable) || unreachable.Error() != want {
			t.Errorf("%s: %v, want it caused by %q", name, err, want)
		}
		if status.Code(err) != codes.Unavailable {
			t.Errorf("%s: code %s, want UNAVAILABLE", name, status.Code(err))
		}
	}

	// A name that does not resolve fails before any dial. (.invalid never
	// resolves; the deadline only bounds a resolver that does not answer.)
	if viaProxy("nohost.invalid:8815") {
		t.Skip("an HTTPS proxy is set for nohost.invalid: gRPC dials it, not the name")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = cliError(tableMain(ctx, []string{"list", "--addr", "nohost.invalid:8815"}, stdio{out: io.Discard, err: io.Discard}))
	var unresolved *unreachableError
	if !errors.As(err, &unresolved) || unresolved.addr != "nohost.invalid:8815" {
		t.Errorf("table list --addr nohost.invalid:8815: %v, want cannot reach fluxgate at nohost.invalid:8815", err)
	}
}
