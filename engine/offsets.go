package engine

import (
	"strconv"

	"github.com/fluxgate-io/fluxgate/errs"
)

// ListOffsets answers list-offsets: per bucket the earliest retained offset,
// the high watermark ("latest"), or the first offset committed at or after a
// timestamp (the high watermark when there is none, also for timestamps in
// the future).
func (e *Engine) ListOffsets(req OffsetsRequest) (map[string]int64, error) {
	t, path, err := e.resolve(req.Table)
	if err != nil {
		return nil, err
	}
	if path.View == "lake" {
		return nil, errs.New(errs.NotFound, "%s: the table has no lake snapshot", path.FullName())
	}
	startup := Startup{Mode: StartLatest}
	if len(req.At) > 0 {
		if err := startup.UnmarshalJSON(req.At); err != nil || startup.Mode == StartFull || startup.Mode == StartOffsets {
			return nil, errs.New(errs.Invalid, `list-offsets "at": want "earliest", "latest" or {"timestamp": ms}`)
		}
	}
	buckets, err := scanBuckets(t.info.Load(), req.Buckets)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(buckets))
	for _, b := range buckets {
		off, err := e.startOffset(t, b, startup)
		if err != nil {
			return nil, err
		}
		out[strconv.Itoa(b)] = off
	}
	return out, nil
}
