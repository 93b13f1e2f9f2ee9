package engine

import (
	"strings"
	"testing"

	"github.com/fluxgate-io/fluxgate/errs"
)

// An open-files budget below what the stores need is refused, naming the
// least.
func TestOpenFilesBelowTheLeastRefused(t *testing.T) {
	_, err := Open(t.Context(), t.TempDir(), Options{OpenFiles: MinOpenFiles - 1})
	if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "at least 256") {
		t.Fatalf("open with %d open files: %v, want INVALID naming the least, 256", MinOpenFiles-1, err)
	}
}
