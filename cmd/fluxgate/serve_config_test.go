package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
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
	if cfg.MaxMessageBytes != 1000000 || cfg.SegmentBytes != 1<<20 || !cfg.InsecureNoAuth || cfg.StreamIdleTimeout.Seconds() != 90 {
		t.Errorf("config gave max-message-bytes %d, segment-bytes %d (the flag's 1048576 wins), insecure-no-auth %v, stream-idle-timeout %s",
			cfg.MaxMessageBytes, cfg.SegmentBytes, cfg.InsecureNoAuth, cfg.StreamIdleTimeout)
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

// TestConfigurationDocListsServeFlags checks that the flag table of
// docs/configuration.md lists every serve flag, and no other, with its
// default: the value in the default column reads back as the flag's default.
// A flag whose zero default stands for a derived one (the table says which)
// is listed in derived.
func TestConfigurationDocListsServeFlags(t *testing.T) {
	derived := map[string]string{"lake-warehouse": "`<data>/lake`", "open-files": "half of `ulimit -n`"}
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	flags, _ := newServeFlagSet(&serveConfig{})
	listed := map[string]bool{}
	backticked := regexp.MustCompile("`([^`]*)`")
	for line := range strings.Lines(string(doc)) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`--") {
			continue
		}
		def := strings.TrimSpace(cells[2])
		values := backticked.FindAllStringSubmatch(def, -1)
		for i, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			name := strings.TrimPrefix(m[1], "--")
			f := flags.Lookup(name)
			if f == nil {
				t.Errorf("docs/configuration.md lists --%s, which fluxgate serve does not have", name)
				continue
			}
			if listed[name] {
				t.Errorf("docs/configuration.md lists --%s twice", name)
			}
			listed[name] = true
			switch {
			case derived[name] != "":
				if f.DefValue != "" && f.DefValue != "0" || !strings.HasPrefix(def, derived[name]) {
					t.Errorf("--%s: default %q, documented as %q, want it to start %s", name, f.DefValue, def, derived[name])
				}
			case f.DefValue == "" || f.DefValue == "false":
				if def != "" && def != "off" {
					t.Errorf("--%s has no default, documented as %q", name, def)
				}
			case i >= len(values):
				t.Errorf("--%s: default %s is not documented (%q)", name, f.DefValue, def)
			default:
				// Parsed as the flag parses it, so 1m documents 1m0s.
				fresh, _ := newServeFlagSet(&serveConfig{})
				if err := fresh.Set(name, values[i][1]); err != nil || fresh.Lookup(name).Value.String() != f.DefValue {
					t.Errorf("--%s: default %s, documented as %q (%v)", name, f.DefValue, values[i][1], err)
				}
			}
		}
	}
	flags.VisitAll(func(f *flag.Flag) {
		if !listed[f.Name] {
			t.Errorf("docs/configuration.md does not list --%s", f.Name)
		}
	})
}
