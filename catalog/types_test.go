package catalog

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fluxgate-io/fluxgate/errs"
)

// The parser itself is tested in package sqltype; these test the catalog's
// wrappers: the canonical spelling stored in specs, the Arrow type, and
// Invalid errors that name the type.
func TestCanonicalType(t *testing.T) {
	canonical := map[string]string{
		"integer":                           "INT",
		"decimal":                           "DECIMAL(10,0)",
		"TIMESTAMP(3) WITH LOCAL TIME ZONE": "TIMESTAMP_LTZ(3)",
		"row(x array<string not null>)":     "ROW<x ARRAY<STRING NOT NULL>>",
	}
	for in, want := range canonical {
		if got, err := CanonicalType(in); got != want || err != nil {
			t.Errorf("CanonicalType(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	dt, err := ParseType("timestamp_ltz(3)")
	if want := (&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}); err != nil || !arrow.TypeEqual(dt, want) {
		t.Errorf("ParseType(timestamp_ltz(3)) = %v, %v, want %s", dt, err, want)
	}
}

func TestParseTypeErrors(t *testing.T) {
	for _, in := range []string{"", "INTT", "DECIMAL(39,0)", "ARRAY<INT", "ROW<a INT, a INT>", "INT NOT NULL"} {
		_, err := ParseType(in)
		if errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), `invalid type "`+in+`": at offset`) {
			t.Errorf("ParseType(%q) = %v, want an invalid-argument error naming the type", in, err)
		}
		if _, err := CanonicalType(in); errs.KindOf(err) != errs.InvalidArgument {
			t.Errorf("CanonicalType(%q) = %v, want an invalid-argument error", in, err)
		}
	}
}
