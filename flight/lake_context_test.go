package flight_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// hangingCatalog is an Iceberg catalog whose table loads, once hang is
// closed, wait until their context ends, as a REST catalog that stopped
// answering would. Each load that gave up sends its context's error on
// released.
type hangingCatalog struct {
	icecatalog.Catalog
	hang     chan struct{}
	released chan error
	unstuck  chan struct{} // closed at the end of the test, to free loads that ignored their context
}

func (c *hangingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	select {
	case <-c.hang:
	default:
		return c.Catalog.LoadTable(ctx, ident)
	}
	select {
	case <-ctx.Done():
		c.released <- ctx.Err()
		return nil, ctx.Err()
	case <-c.unstuck:
		return nil, errors.New("the test ended and freed a load that ignored its context")
	}
}

// TestLakeCallsEndWithTheCallersDeadline: a Flight call that waits on the
// lake gives up at its caller's deadline, on the server too, instead of
// holding a handler (and the lake call) forever.
func TestLakeCallsEndWithTheCallersDeadline(t *testing.T) {
	warehouse := t.TempDir()
	fs, err := hadoop.NewCatalog("fluxgate", warehouse, iceberg.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	cat := &hangingCatalog{Catalog: fs, hang: make(chan struct{}), released: make(chan error, 1), unstuck: make(chan struct{})}
	// No scheduler ticks during the test: each call below is the only one
	// that reaches the catalog.
	ts := start(t, engine.Options{Lake: engine.LakeOptions{Iceberg: cat}, TieringInterval: time.Hour})
	t.Cleanup(func() { close(cat.unstuck) }) // runs before the server closes
	if _, err := ts.cl.CreateTable(ctxT(t), lakeOrdersSpec("fluss.tiered", nil), false); err != nil {
		t.Fatal(err)
	}
	close(cat.hang)

	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"create-table", func(ctx context.Context) error {
			_, err := ts.cl.CreateTable(ctx, lakeOrdersSpec("fluss.other", nil), false)
			return err
		}},
		{"alter-table", func(ctx context.Context) error {
			_, err := ts.cl.AlterTable(ctx, client.AlterRequest{Table: "fluss.tiered", AddColumns: []client.Column{{Name: "note", Type: "STRING"}}})
			return err
		}},
		{"list-offsets of the lake view", func(ctx context.Context) error {
			_, err := ts.cl.ListOffsets(ctx, "fluss.tiered$lake", client.Latest, nil)
			return err
		}},
		{"GetFlightInfo of a union read", func(ctx context.Context) error {
			_, err := ts.cl.PlanTable(ctx, "fluss.tiered")
			return err
		}},
		{"tier-now", func(ctx context.Context) error {
			_, err := ts.cl.TierNow(ctx, "fluss.tiered")
			return err
		}},
		{"drop-table", func(ctx context.Context) error {
			return ts.cl.DropTable(ctx, "fluss.tiered", false)
		}},
	}
	for _, c := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.call(ctx)
		cancel()
		wantCode(t, err, codes.DeadlineExceeded)
		// The client gives up at its deadline whatever the server does; the
		// server's lake call must end with the call too (at the deadline
		// the server sees, or at the client's cancellation, whichever is
		// first).
		select {
		case err := <-cat.released:
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: the lake call ended with %v, want the caller's context's end", c.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the lake call still waits 10 s after the caller's deadline: the server dropped the caller's context", c.name)
		}
	}
}
