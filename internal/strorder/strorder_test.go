package strorder

import "testing"

func TestPrefixKeyOrders(t *testing.T) {
	for _, p := range [][2]string{{"", "a"}, {"a", "b"}, {"abc", "abd"}, {"abcdefgh", "abcdefgi"}, {"a\x00", "a\x01"}} {
		if PrefixKey(p[0]) >= PrefixKey(p[1]) {
			t.Errorf("PrefixKey(%q) >= PrefixKey(%q)", p[0], p[1])
		}
		if PrefixKey(p[0]) != PrefixKey([]byte(p[0])) {
			t.Errorf("PrefixKey of %q differs as string and bytes", p[0])
		}
	}
	if PrefixKey("abcdefgh1") != PrefixKey("abcdefgh2") {
		t.Error("PrefixKey looks past 8 bytes")
	}
}

func TestSuccessor(t *testing.T) {
	for p, want := range map[string]string{"a": "b", "ab": "ac", "a\xff": "b", "": ""} {
		got, ok := Successor(p)
		if ok != (want != "") || got != want {
			t.Errorf("Successor(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
	if _, ok := Successor("\xff\xff"); ok {
		t.Error("Successor of all 0xff bytes exists")
	}
}
