package main

import (
	"path/filepath"
	"testing"
)

func TestParseCut(t *testing.T) {
	abs, err := filepath.Abs("t/0/log/x.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		file string
		pos  int64
		ok   bool
	}{
		{"/d/tables/3/0/log/00000000000000000000.log:16440", "/d/tables/3/0/log/00000000000000000000.log", 16440, true},
		{"t/0/log/x.log:0", abs, 0, true},
		{"/a:b/x.log:7", "/a:b/x.log", 7, true},
		{"/d/x.log", "", 0, false},
		{"/d/x.log:", "", 0, false},
		{"/d/x.log:-1", "", 0, false},
		{":5", "", 0, false},
	} {
		file, pos, err := parseCut(tc.in)
		if (err == nil) != tc.ok || file != tc.file || pos != tc.pos {
			t.Errorf("parseCut(%q) = %q, %d, %v; want %q, %d, ok %v", tc.in, file, pos, err, tc.file, tc.pos, tc.ok)
		}
	}
}
