package conformance

// Assertions shared by the scenarios. Each returns an error that says what
// was asked, what was expected and what came back.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// wantCode checks that err carries the gRPC code want and that its message
// names every one of culprits. what describes the request.
func wantCode(what string, err error, want codes.Code, culprits ...string) error {
	if err == nil {
		return fmt.Errorf("%s: succeeded, want %s", what, codeName(want))
	}
	st, _ := status.FromError(err)
	if st.Code() != want {
		return fmt.Errorf("%s: got %s (%q), want %s", what, codeName(st.Code()), st.Message(), codeName(want))
	}
	for _, c := range culprits {
		if !names(st.Message(), c) {
			return fmt.Errorf("%s: got %s as expected, but the message %q does not name %q", what, codeName(want), st.Message(), c)
		}
	}
	return nil
}

// names reports whether msg contains word as a whole word, so that a column
// "id" is not found in "invalid".
func names(msg, word string) bool {
	if word == "" {
		return true
	}
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_])`)
	return re.MatchString(msg)
}

// wantCodeIn is wantCode for requests where the protocol allows either code.
func wantCodeIn(what string, err error, want []codes.Code, culprits ...string) error {
	if err == nil {
		return fmt.Errorf("%s: succeeded, want one of %s", what, codeNames(want))
	}
	code := status.Code(err)
	if !slices.Contains(want, code) {
		return fmt.Errorf("%s: got %s (%q), want one of %s", what, codeName(code), status.Convert(err).Message(), codeNames(want))
	}
	return wantCode(what, err, code, culprits...)
}

// codeName is the code's name as PROTOCOL.md writes it (NOT_FOUND).
func codeName(c codes.Code) string {
	switch c {
	case codes.OK:
		return "OK"
	case codes.Canceled:
		return "CANCELLED"
	}
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

func codeNames(cs []codes.Code) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = codeName(c)
	}
	return strings.Join(names, " or ")
}

// equalInts checks two id lists for equality, showing the first difference.
func equalInts(what string, got, want []int64) error {
	if slices.Equal(got, want) {
		return nil
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Errorf("%s: %d rows, want %d; first difference at row %d: got id %d, want %d (got %s, want %s)",
				what, len(got), len(want), i, got[i], want[i], abbrev(got), abbrev(want))
		}
	}
	return fmt.Errorf("%s: %d rows, want %d (got %s, want %s)", what, len(got), len(want), abbrev(got), abbrev(want))
}

// equalBuckets checks per-bucket id lists (bucket → ids in offset order).
func equalBuckets(what string, got, want map[int][]int64) error {
	for _, b := range sortedKeys(got, want) {
		if err := equalInts(fmt.Sprintf("%s, bucket %d", what, b), got[b], want[b]); err != nil {
			return err
		}
	}
	return nil
}

// equalOffsets checks bucket → offset maps; a missing bucket counts as 0 in
// neither, so that the message shows it.
func equalOffsets(what string, got, want map[int]int64) error {
	if maps.Equal(got, want) {
		return nil
	}
	return fmt.Errorf("%s: got offsets %v, want %v", what, got, want)
}

func sortedKeys[V any](ms ...map[int]V) []int {
	seen := map[int]bool{}
	for _, m := range ms {
		for k := range m {
			seen[k] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// abbrev prints a list of ids, shortened in the middle when long.
func abbrev(ids []int64) string {
	if len(ids) <= 12 {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%v ... %v", ids[:6], ids[len(ids)-6:])
}
