package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestCheckListen(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for _, addr := range []string{"127.0.0.1:1", "localhost:1", "[::1]:1", "127.0.0.5:1"} {
		if err := checkListen(addr, false, false, log); err != nil {
			t.Errorf("%s without auth: %v", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:1", ":1", "10.0.0.1:1", "[::]:1", "example.com:1"} {
		if err := checkListen(addr, false, false, log); err == nil {
			t.Errorf("%s without auth: no error", addr)
		}
		if err := checkListen(addr, true, false, log); err != nil {
			t.Errorf("%s with users: %v", addr, err)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("unexpected logs: %s", &logs)
	}
	if err := checkListen("0.0.0.0:1", false, true, log); err != nil {
		t.Errorf("--insecure-no-auth: %v", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "without authentication") {
		t.Errorf("--insecure-no-auth logged %q, want a warning", &logs)
	}
}
