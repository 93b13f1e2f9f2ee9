package engine

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A primary-key table whose state is lost after retention removed the start
// of its changelog cannot be recovered: it is unavailable with DATA_LOSS,
// and the engine still opens and serves its other tables.
func TestUnrecoverableStateMakesOnlyItsTableUnavailable(t *testing.T) {
	dir := t.TempDir()
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	opts := Options{Log: LogOptions{SegmentBytes: 4 << 10, Now: func() time.Time { return time.Unix(0, now.Load()) }}}
	e, err := Open(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	createStatsTable(t, e, "lost", map[string]string{"table.log.ttl": "1h"})
	createStatsTable(t, e, "kept", nil)
	for i := range int64(40) {
		writeStatsOp(t, e, "lost", statsOp{protocol.ModeUpsert, i * 20, i*20 + 20, nil})
	}
	writeStatsOp(t, e, "kept", statsOp{protocol.ModeUpsert, 0, 10, nil})
	now.Add(int64(2 * time.Hour))
	e.ExpireLogs(t.Context())
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "kv")); err != nil {
		t.Fatal(err)
	}

	e, err = Open(t.Context(), dir, opts)
	if err != nil {
		t.Fatalf("open with one unrecoverable table: %v", err)
	}
	defer e.Close()
	if _, err := e.TableStats(t.Context(), protocol.TableStatsRequest{Table: "lost"}); errs.KindOf(err) != errs.DataLoss {
		t.Fatalf("the unrecoverable table answers %v, want DATA_LOSS", err)
	}
	if got := checkRowCount(t, e, "kept"); got.RowCount != 10 {
		t.Fatalf("the other table has %d rows, want 10", got.RowCount)
	}
}
