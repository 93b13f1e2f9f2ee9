package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeConfigFile checks that --config takes whole numbers of any size
// as written, and names the key and value it cannot use.
func TestServeConfigFile(t *testing.T) {
	write := func(t *testing.T, body string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "fluxgate.json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write(t, `{"max-message-bytes": 1000000, "segment-bytes": 268435456, "insecure-no-auth": true, "stream-idle-timeout": "90s"}`)
	cfg, err := parseServeFlags([]string{"--config", path, "--segment-bytes", "1048576"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxMessageBytes != 1000000 || cfg.SegmentBytes != 1<<20 || !cfg.InsecureNoAuth || cfg.IdleTimeout.Seconds() != 90 {
		t.Errorf("config gave max-message-bytes %d, segment-bytes %d (the flag's 1048576 wins), insecure-no-auth %v, stream-idle-timeout %s",
			cfg.MaxMessageBytes, cfg.SegmentBytes, cfg.InsecureNoAuth, cfg.IdleTimeout)
	}

	for body, want := range map[string]string{
		`{"max-message-bytes": 1.5}`: `max-message-bytes: invalid value "1.5"`,
		`{"max-message-bytes": [1]}`: "max-message-bytes: want a string, number or boolean, not an array",
		`{"data": null}`:             "data: want a string, number or boolean, not null",
		`{"max-mesage-bytes": 1}`:    `unknown key "max-mesage-bytes"`,
		`{"log-level": {"a": "b"}}`:  "log-level: want a string, number or boolean, not an object",
	} {
		path := write(t, body)
		_, err := parseServeFlags([]string{"--config", path})
		if err == nil || !strings.Contains(err.Error(), "config "+path+": "+want) {
			t.Errorf("%s: %v, want an error with %q", body, err, want)
		}
	}
}
