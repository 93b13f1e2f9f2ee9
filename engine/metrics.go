package engine

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
)

// metrics are the engine's instruments. Tables are named by attribute.
type metrics struct {
	rowsWritten  metric.Int64Counter
	bytesWritten metric.Int64Counter
	rowsRead     metric.Int64Counter
	bytesRead    metric.Int64Counter
	syncSeconds  metric.Float64Histogram
	scans        metric.Int64UpDownCounter
	lookupKeys   metric.Int64Counter

	lakeRoundSeconds  metric.Float64Histogram
	lakeFiles         metric.Int64Counter
	lakeBytes         metric.Int64Counter
	lakeRows          metric.Int64Counter
	lakeRoundFailures metric.Int64Counter
}

func newMetrics(e *Engine, m metric.Meter) (*metrics, error) {
	if m == nil {
		m = noop.NewMeterProvider().Meter("")
	}
	var (
		mt  metrics
		err error
	)
	if mt.rowsWritten, err = m.Int64Counter("fluxgate.rows.written", metric.WithDescription("rows appended, per table")); err != nil {
		return nil, err
	}
	if mt.bytesWritten, err = m.Int64Counter("fluxgate.bytes.written", metric.WithUnit("By"), metric.WithDescription("encoded bytes appended to the log, per table")); err != nil {
		return nil, err
	}
	if mt.rowsRead, err = m.Int64Counter("fluxgate.rows.read", metric.WithDescription("rows sent by scans, per table")); err != nil {
		return nil, err
	}
	if mt.bytesRead, err = m.Int64Counter("fluxgate.bytes.read", metric.WithUnit("By"), metric.WithDescription("bytes of Arrow data sent by scans, per table")); err != nil {
		return nil, err
	}
	if mt.syncSeconds, err = m.Float64Histogram("fluxgate.log.sync.duration", metric.WithUnit("s"), metric.WithDescription("duration of one group-commit fsync round")); err != nil {
		return nil, err
	}
	if mt.scans, err = m.Int64UpDownCounter("fluxgate.scans.open", metric.WithDescription("scan streams being served")); err != nil {
		return nil, err
	}
	if mt.lookupKeys, err = m.Int64Counter("fluxgate.lookup.keys", metric.WithDescription("keys looked up, per table")); err != nil {
		return nil, err
	}
	if mt.lakeRoundSeconds, err = m.Float64Histogram("fluxgate.lake.round.duration", metric.WithUnit("s"), metric.WithDescription("duration of one tiering round, per table")); err != nil {
		return nil, err
	}
	if mt.lakeFiles, err = m.Int64Counter("fluxgate.lake.files.written", metric.WithDescription("Parquet data and delete files committed to the lake, per table")); err != nil {
		return nil, err
	}
	if mt.lakeBytes, err = m.Int64Counter("fluxgate.lake.bytes.written", metric.WithUnit("By"), metric.WithDescription("bytes of files committed to the lake, per table")); err != nil {
		return nil, err
	}
	if mt.lakeRows, err = m.Int64Counter("fluxgate.lake.rows.tiered", metric.WithDescription("log rows read by committed tiering rounds, per table")); err != nil {
		return nil, err
	}
	if mt.lakeRoundFailures, err = m.Int64Counter("fluxgate.lake.round.failures", metric.WithDescription("tiering rounds that failed, per table")); err != nil {
		return nil, err
	}
	failing, err := m.Int64ObservableGauge("fluxgate.lake.round.failing", metric.WithDescription("1 while a lake-enabled table's tiering rounds fail (lake-snapshot's round_failure says why), else 0"))
	if err != nil {
		return nil, err
	}
	lagOffsets, err := m.Int64ObservableGauge("fluxgate.lake.lag.offsets", metric.WithDescription("offsets of a lake-enabled table's log not yet in the lake, summed over buckets"))
	if err != nil {
		return nil, err
	}
	lagSeconds, err := m.Float64ObservableGauge("fluxgate.lake.lag.seconds", metric.WithUnit("s"), metric.WithDescription("how long a lake-enabled table's lake has been behind its log (0 when caught up)"))
	if err != nil {
		return nil, err
	}
	logBytes, err := m.Int64ObservableGauge("fluxgate.log.bytes", metric.WithUnit("By"), metric.WithDescription("bytes of a table's log segments on disk"))
	if err != nil {
		return nil, err
	}
	bytesRead, err := m.Int64ObservableCounter("fluxgate.log.bytes.read", metric.WithUnit("By"), metric.WithDescription("bytes scans read from a table's log files"))
	if err != nil {
		return nil, err
	}
	hw, err := m.Int64ObservableGauge("fluxgate.log.high_watermark", metric.WithDescription("offset below which a bucket's log is durable and readable"))
	if err != nil {
		return nil, err
	}
	logEnd, err := m.Int64ObservableGauge("fluxgate.log.end_offset", metric.WithDescription("offset a bucket's next append takes (above the high watermark while appends await their fsync)"))
	if err != nil {
		return nil, err
	}
	earliest, err := m.Int64ObservableGauge("fluxgate.log.earliest_offset", metric.WithDescription("first offset a bucket still retains"))
	if err != nil {
		return nil, err
	}
	openFiles, err := m.Int64ObservableGauge("fluxgate.log.files.open", metric.WithDescription("log segment files open, of the logs' share of --open-files"))
	if err != nil {
		return nil, err
	}
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(openFiles, int64(e.logOpts.Files.Open()))
		type lag struct {
			offsets int64
			since   time.Time
			failing bool
		}
		lags := map[string]lag{} // by table: a partitioned table's partitions sum
		e.tables.Range(func(t *table.Table) {
			info := t.Current().Info
			name := info.Path().String()
			// A partition's series add its name: each is a log of its own.
			var part []attribute.KeyValue
			if p := info.Partition(); p != nil {
				part = []attribute.KeyValue{attribute.String("partition", p.PartitionName)}
			}
			tableAttrs := metric.WithAttributes(append([]attribute.KeyValue{attribute.String("table", name)}, part...)...)
			o.ObserveInt64(logBytes, t.Log.Size(), tableAttrs)
			o.ObserveInt64(bytesRead, t.Log.BytesRead(), tableAttrs)
			for b := range t.Log.Buckets() {
				attrs := metric.WithAttributes(append([]attribute.KeyValue{attribute.String("table", name), attribute.Int("bucket", b)}, part...)...)
				o.ObserveInt64(hw, t.Log.HighWatermark(b), attrs)
				o.ObserveInt64(logEnd, t.Log.LogEnd(b), attrs)
				o.ObserveInt64(earliest, t.Log.EarliestOffset(b), attrs)
			}
			if offsets, since, ok := e.lakes.Lag(t); ok {
				l := lags[name]
				failing := e.lakes.RoundFailure(e.lakes.OwnerOf(t)) != nil
				lags[name] = lag{offsets: l.offsets + offsets, since: since, failing: failing}
			}
		})
		for name, l := range lags {
			var seconds float64
			if l.offsets > 0 {
				seconds = time.Since(l.since).Seconds()
			}
			o.ObserveInt64(lagOffsets, l.offsets, tableAttr(name))
			o.ObserveFloat64(lagSeconds, seconds, tableAttr(name))
			var f int64
			if l.failing {
				f = 1
			}
			o.ObserveInt64(failing, f, tableAttr(name))
		}
		return nil
	}, hw, logEnd, earliest, logBytes, bytesRead, lagOffsets, lagSeconds, failing, openFiles)
	return &mt, err
}

func tableAttr(name string) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("table", name))
}

func (m *metrics) observeSync(d time.Duration) {
	m.syncSeconds.Record(context.Background(), d.Seconds())
}
