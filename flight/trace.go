package flight

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// tableAttrKey is the span attribute naming the table an RPC works on.
const tableAttrKey = "fluxgate.table"

// tagTable puts the table an RPC works on on the RPC's span (otelgrpc's
// server span, when the server has the stats handler; otherwise a no-op),
// as `database.table` like the metrics' table label; a name that does not
// parse goes as given.
func tagTable(ctx context.Context, table string) {
	span := trace.SpanFromContext(ctx)
	if table == "" || !span.IsRecording() {
		return
	}
	if p, err := protocol.ParseTablePath(table); err == nil {
		table = p.String()
	}
	span.SetAttributes(attribute.String(tableAttrKey, table))
}
