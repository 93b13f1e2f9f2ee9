package errs

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuoteAndCutKeepMessagesShort(t *testing.T) {
	if got := Quote("orders"); got != `"orders"` {
		t.Errorf("Quote of a short string: %s", got)
	}
	long := strings.Repeat("é", 1<<20) // two bytes each: the cut falls inside one
	for _, got := range []string{Quote(long), Cut(long)} {
		if len(got) > QuoteMax+5 || !strings.HasSuffix(got, "...") {
			t.Errorf("%d bytes, ending %q", len(got), got[len(got)-5:])
		}
		if !utf8.ValidString(got) || strings.Contains(got, `\x`) {
			t.Errorf("cut inside a character: %s", got)
		}
	}
}
