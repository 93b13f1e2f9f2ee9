package flight_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	fgflight "github.com/fluxgate-io/fluxgate/flight"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
)

// The intake's fuzz targets send a batch message (metadata and body, as
// client bytes) through a real server. Their corpus in
// testdata/fuzz/<target> holds the crafted cases of intake_test.go.

// FuzzDoPutBody: the server acknowledges a DoPut batch or refuses it with
// INVALID_ARGUMENT (RESOURCE_EXHAUSTED over the message limit); it never
// crashes, and a batch it acknowledged leaves the table readable. A batch
// goes to a table of its codec, which stores it as received.
func FuzzDoPutBody(f *testing.F) {
	ts := startWith(f, engine.Options{}, fgflight.Options{})
	lz4Spec := ordersSpec("lz4_orders", 1, "")
	lz4Spec.Options["table.log.arrow.compression.type"] = "lz4_frame"
	for _, spec := range []client.TableSpec{ordersSpec("orders", 1, ""), lz4Spec} {
		if _, err := ts.cl.CreateTable(context.Background(), spec, false); err != nil {
			f.Fatal(err)
		}
	}
	cl := rawClient(f, ts)
	schema, valid, _ := craftedOrders(f, ts.mem)
	for _, v := range valid {
		f.Add(v.DataHeader, v.DataBody)
	}
	f.Fuzz(func(t *testing.T, meta, body []byte) {
		table := "orders" // ZSTD
		if ipcmsg.CodecOf(meta) == ipcmsg.CodecLZ4Frame {
			table = "lz4_orders"
		}
		err := putRaw(ctxT(t), cl, `{"write":{"table":"`+table+`"}}`, schema, &flight.FlightData{DataHeader: meta, DataBody: body})
		if refusedOrAccepted(t, err) {
			ids(t, ts, client.ScanRequest{Table: table}) // fails the test if the table is unreadable
		}
	})
}

// FuzzDoExchangeBody: the server answers a lookup key batch (inserting
// missing keys) or refuses it with INVALID_ARGUMENT; it never crashes, and
// after keys it inserted, lookups still serve.
func FuzzDoExchangeBody(f *testing.F) {
	ts := startWith(f, engine.Options{}, fgflight.Options{})
	createUIDMapping(f, ts)
	cl := rawClient(f, ts)
	schema, valid, _ := craftedKeys(f, ts.mem)
	for _, v := range valid {
		f.Add(v.DataHeader, v.DataBody)
	}
	f.Fuzz(func(t *testing.T, meta, body []byte) {
		err := exchangeRaw(ctxT(t), cl, lookupUIDs, schema, &flight.FlightData{DataHeader: meta, DataBody: body})
		if refusedOrAccepted(t, err) {
			assertLookupServes(t, ts)
		}
	})
}

// refusedOrAccepted fails the test unless err is nil (it reports true) or
// the refusal of a bad message.
func refusedOrAccepted(t *testing.T, err error) bool {
	t.Helper()
	switch status.Code(err) {
	case codes.OK:
		return true
	case codes.InvalidArgument, codes.ResourceExhausted:
		return false
	}
	t.Fatalf("got %v, want success or INVALID_ARGUMENT", err)
	return false
}
