package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// ListOffsets answers list-offsets: per bucket the earliest retained offset,
// the high watermark ("latest"), or the first offset committed at or after a
// timestamp (the high watermark when there is none, also for timestamps in
// the future).
func (e *Engine) ListOffsets(ctx context.Context, req protocol.OffsetsRequest) (protocol.OffsetsResult, error) {
	t, path, err := e.resolve(req.Table)
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	startup := protocol.Position{Mode: protocol.PositionLatest}
	if len(req.At) > 0 {
		if err := startup.UnmarshalJSON(req.At); err != nil || startup.Mode == protocol.PositionFull || startup.Mode == protocol.PositionOffsets {
			return protocol.OffsetsResult{}, errs.New(errs.Invalid, `list-offsets "at": want "earliest", "latest" or {"timestamp": ms}`)
		}
	}
	info := t.current().info
	buckets, err := scanBuckets(info, req.Buckets)
	if err != nil {
		return protocol.OffsetsResult{}, err
	}
	out := make(map[int]int64, len(buckets))
	if path.View == "lake" {
		// The lake's latest offsets are its snapshot's: where tiering and a
		// union read's log part go on from.
		if startup.Mode != protocol.PositionLatest {
			return protocol.OffsetsResult{}, errs.New(errs.Precondition, "%s: list-offsets of the lake view knows \"latest\" (the lake snapshot's offsets) only", path.FullName())
		}
		snap, err := e.lakeSnapshot(ctx, t)
		if err != nil {
			return protocol.OffsetsResult{}, err
		}
		if snap == nil {
			return protocol.OffsetsResult{}, noLakeSnapshot(info, path)
		}
		for _, b := range buckets {
			out[b] = snap.Offsets[b]
		}
		return protocol.OffsetsResult{Offsets: out}, nil
	}
	for _, b := range buckets {
		off, err := e.startOffset(t, b, startup)
		if err != nil {
			return protocol.OffsetsResult{}, err
		}
		out[b] = off
	}
	return protocol.OffsetsResult{Offsets: out}, nil
}
