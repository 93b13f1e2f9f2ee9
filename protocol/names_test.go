package protocol

import (
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

func TestParseTablePath(t *testing.T) {
	tests := []struct {
		in   string
		want TablePath
		full string
	}{
		{"orders", TablePath{"fluss", "orders", ""}, "fluss.orders"},
		{"shop.orders", TablePath{"shop", "orders", ""}, "shop.orders"},
		{"shop.orders$changelog", TablePath{"shop", "orders", "changelog"}, "shop.orders$changelog"},
		{"orders$lake", TablePath{"fluss", "orders", "lake"}, "fluss.orders$lake"},
		{"a-b_9.C-d", TablePath{"a-b_9", "C-d", ""}, "a-b_9.C-d"},
		{"_x.y_", TablePath{"_x", "y_", ""}, "_x.y_"},
	}
	for _, tt := range tests {
		got, err := ParseTablePath(tt.in)
		if err != nil || got != tt.want || got.FullName() != tt.full {
			t.Errorf("ParseTablePath(%q) = %+v, %v; want %+v (%s)", tt.in, got, err, tt.want, tt.full)
		}
		if got.String() != tt.want.Database+"."+tt.want.Table {
			t.Errorf("%q.String() = %q", tt.in, got.String())
		}
	}
	for _, in := range []string{
		"", ".", "a.", ".b", "a.b.c", "__sys.t", "d.__t", "t$binlog", "t$", "t$lake$snapshots", "a b", "d.t!",
		"t$changelog$lake", "d$x.t", strings.Repeat("x", 201), "ü",
	} {
		if _, err := ParseTablePath(in); errs.KindOf(err) != errs.InvalidArgument {
			t.Errorf("ParseTablePath(%q) = %v, want invalid argument", in, err)
		}
	}
	if _, err := ParseTablePath(strings.Repeat("x", 200)); err != nil {
		t.Errorf("200-character name: %v", err)
	}
	if err := ValidateDatabaseName("__internal"); errs.KindOf(err) != errs.InvalidArgument {
		t.Errorf("ValidateDatabaseName(__internal) = %v", err)
	}
}
