package cli

import (
	"bytes"
	"testing"
)

func TestWriteAligned(t *testing.T) {
	var out bytes.Buffer
	if err := WriteAligned(&out, []string{"A", "BB"}, [][]string{{"xyz", "1"}, {"é", "22"}}); err != nil {
		t.Fatal(err)
	}
	if want := "A    BB\nxyz  1\né    22\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestHumanCount(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 9999: "9999", 12345: "12.3k", 2.5e6: "2.50M", 3e9: "3.00G"} {
		if got := HumanCount(v); got != want {
			t.Errorf("HumanCount(%v) = %q, want %q", v, got, want)
		}
	}
}
