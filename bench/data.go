package bench

// The data of fluxgate bench: a realistic, time-ordered event table (so that
// compression and batch statistics behave as they would on real data), and
// the keys and rows of the primary-key workloads.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"

	"github.com/fluxgate-io/fluxgate/bench/benchdata"
	"github.com/fluxgate-io/fluxgate/client"
)

// benchEventColumns are the 20 columns of the event table.
var benchEventColumns = []client.Column{
	{Name: "ts", Type: "BIGINT"},          // epoch milliseconds, ascending
	{Name: "event_id", Type: "BIGINT"},    // ascending
	{Name: "user_id", Type: "BIGINT"},     // Zipf over a million users
	{Name: "session_id", Type: "BIGINT"},  // per user and half hour
	{Name: "event_type", Type: "STRING"},  // 7 values, skewed
	{Name: "page_id", Type: "BIGINT"},     // Zipf
	{Name: "product_id", Type: "BIGINT"},  // Zipf; NULL for events without a product
	{Name: "quantity", Type: "INT"},       // NULL for events without a product
	{Name: "amount", Type: "DOUBLE"},      // 2 decimals; 0 for events without a price
	{Name: "currency", Type: "STRING"},    // follows country
	{Name: "country", Type: "STRING"},     // ISO code, skewed
	{Name: "region", Type: "STRING"},      // follows country
	{Name: "device", Type: "STRING"},      // mobile, desktop, tablet
	{Name: "os", Type: "STRING"},          // follows device
	{Name: "browser", Type: "STRING"},     // skewed
	{Name: "app_version", Type: "STRING"}, // a few releases
	{Name: "latency_ms", Type: "INT"},     // log-normal
	{Name: "is_mobile", Type: "BOOLEAN"},  // follows device
	{Name: "referrer", Type: "STRING"},    // skewed
	{Name: "campaign_id", Type: "BIGINT"}, // mostly NULL
}

// The two columns of the projection workload.
var benchProjection = []string{"ts", "amount"}

func benchEventSpec(table, compression string) client.TableSpec {
	return client.TableSpec{
		Table:   table,
		Columns: benchEventColumns,
		Options: map[string]string{"table.log.arrow.compression.type": compression},
	}
}

// benchEvents is the event data, held in memory for the whole run.
type benchEvents struct {
	recs  []arrow.RecordBatch
	rows  int64
	bytes int64 // Arrow column data of recs
	// The filter workload's predicate, lo <= ts < hi, and how many rows
	// match it.
	lo, hi, matching int64
}

// weighted picks one of values with the given weights.
type weighted struct {
	values []string
	cum    []int
}

func newWeighted(pairs ...any) weighted {
	var w weighted
	total := 0
	for i := 0; i < len(pairs); i += 2 {
		total += pairs[i+1].(int)
		w.values = append(w.values, pairs[i].(string))
		w.cum = append(w.cum, total)
	}
	return w
}

func (w weighted) pick(rng *rand.Rand) int {
	x := rng.Intn(w.cum[len(w.cum)-1])
	for i, c := range w.cum {
		if x < c {
			return i
		}
	}
	return len(w.cum) - 1
}

var (
	benchEventTypes = newWeighted("page_view", 60, "click", 20, "search", 8, "add_to_cart", 6, "checkout", 3, "purchase", 2, "login", 1)
	benchCountries  = newWeighted("US", 30, "DE", 10, "GB", 8, "FR", 7, "IN", 7, "BR", 6, "JP", 5, "CA", 4, "ES", 3, "IT", 3,
		"NL", 2, "SE", 2, "PL", 2, "MX", 2, "AU", 2, "KR", 2, "TR", 1, "AR", 1, "ZA", 1, "SG", 1)
	benchCountryInfo = map[string][2]string{ // currency, region
		"US": {"USD", "us-east"}, "CA": {"CAD", "us-east"}, "MX": {"MXN", "us-west"}, "BR": {"BRL", "sa-east"}, "AR": {"ARS", "sa-east"},
		"DE": {"EUR", "eu-central"}, "FR": {"EUR", "eu-west"}, "ES": {"EUR", "eu-west"}, "IT": {"EUR", "eu-south"}, "NL": {"EUR", "eu-west"},
		"GB": {"GBP", "eu-west"}, "SE": {"SEK", "eu-north"}, "PL": {"PLN", "eu-central"}, "TR": {"TRY", "eu-south"}, "ZA": {"ZAR", "af-south"},
		"IN": {"INR", "ap-south"}, "JP": {"JPY", "ap-northeast"}, "KR": {"KRW", "ap-northeast"}, "AU": {"AUD", "ap-southeast"}, "SG": {"SGD", "ap-southeast"},
	}
	benchDevices  = newWeighted("mobile", 55, "desktop", 35, "tablet", 10)
	benchOS       = [][]string{{"android", "ios"}, {"windows", "macos", "linux"}, {"ipados", "android"}}
	benchBrowsers = newWeighted("chrome", 55, "safari", 25, "edge", 8, "firefox", 6, "samsung", 4, "opera", 2)
	benchVersions = newWeighted("5.14.2", 40, "5.14.1", 25, "5.13.0", 15, "5.12.3", 10, "5.11.9", 6, "4.9.0", 4)
	benchReferrer = newWeighted("direct", 40, "google", 30, "email", 10, "facebook", 8, "instagram", 6, "partner", 4, "twitter", 2)
)

// benchEventData builds rows events in batches of batchRows, deterministically.
func benchEventData(rows, batchRows int) *benchEvents {
	schema, err := (&client.TableSpec{Columns: benchEventColumns}).ArrowSchema()
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewSource(20261130))
	users := rand.NewZipf(rng, 1.1, 10, 999_999)
	pages := rand.NewZipf(rng, 1.2, 5, 9_999)
	products := rand.NewZipf(rng, 1.05, 20, 49_999)
	campaigns := rand.NewZipf(rng, 1.3, 2, 499)
	ts := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC).UnixMilli()
	ev := &benchEvents{rows: int64(rows)}
	allTS := make([]int64, 0, rows)
	for from := 0; from < rows; from += batchRows {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		f := func(i int) array.Builder { return b.Field(i) }
		for i := from; i < min(from+batchRows, rows); i++ {
			ts += int64(rng.Intn(3)) // about 1000 events a second
			allTS = append(allTS, ts)
			user := int64(users.Uint64()) + 1
			typ := benchEventTypes.pick(rng)
			country := benchCountries.values[benchCountries.pick(rng)]
			device := benchDevices.pick(rng)
			f(0).(*array.Int64Builder).Append(ts)
			f(1).(*array.Int64Builder).Append(int64(i) + 1)
			f(2).(*array.Int64Builder).Append(user)
			f(3).(*array.Int64Builder).Append(user*100_000 + ts/1_800_000%100_000)
			f(4).(*array.StringBuilder).Append(benchEventTypes.values[typ])
			f(5).(*array.Int64Builder).Append(int64(pages.Uint64()) + 1)
			name := benchEventTypes.values[typ]
			withProduct := name == "add_to_cart" || name == "checkout" || name == "purchase" || (name == "page_view" && rng.Intn(2) == 0)
			priced := name == "add_to_cart" || name == "checkout" || name == "purchase"
			if withProduct {
				f(6).(*array.Int64Builder).Append(int64(products.Uint64()) + 1)
				f(7).(*array.Int32Builder).Append(int32(1 + rng.Intn(3)*rng.Intn(2)))
			} else {
				f(6).AppendNull()
				f(7).AppendNull()
			}
			amount := 0.0
			if priced {
				amount = math.Round(math.Exp(rng.NormFloat64()*0.9+3.2)*100) / 100
			}
			f(8).(*array.Float64Builder).Append(amount)
			info := benchCountryInfo[country]
			f(9).(*array.StringBuilder).Append(info[0])
			f(10).(*array.StringBuilder).Append(country)
			f(11).(*array.StringBuilder).Append(info[1])
			f(12).(*array.StringBuilder).Append(benchDevices.values[device])
			oses := benchOS[device]
			f(13).(*array.StringBuilder).Append(oses[rng.Intn(len(oses))])
			f(14).(*array.StringBuilder).Append(benchBrowsers.values[benchBrowsers.pick(rng)])
			f(15).(*array.StringBuilder).Append(benchVersions.values[benchVersions.pick(rng)])
			f(16).(*array.Int32Builder).Append(int32(math.Exp(rng.NormFloat64()*0.6 + 4)))
			f(17).(*array.BooleanBuilder).Append(device != 1)
			f(18).(*array.StringBuilder).Append(benchReferrer.values[benchReferrer.pick(rng)])
			if rng.Intn(5) == 0 {
				f(19).(*array.Int64Builder).Append(int64(campaigns.Uint64()) + 1)
			} else {
				f(19).AppendNull()
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		ev.recs = append(ev.recs, rec)
		ev.bytes += util.TotalRecordSize(rec)
	}
	// The filter: a narrow ts range in the middle holding about 1 % of the
	// rows, so that batch statistics can skip all the other batches.
	i := rows * 495 / 1000
	ev.lo, ev.hi = allTS[i], allTS[min(i+rows/100, rows-1)]
	for _, t := range allTS {
		if t >= ev.lo && t < ev.hi {
			ev.matching++
		}
	}
	return ev
}

// eventData returns the event data, building it on first use.
func (e *benchEnv) eventData() *benchEvents {
	if e.events == nil {
		e.events = benchEventData(e.cfg.rows, e.cfg.batchRows)
	}
	return e.events
}

// narrowData returns the data of the narrow workloads, building it on first
// use.
func (e *benchEnv) narrowData() *benchdata.Narrow {
	if e.narrow == nil {
		e.narrow = benchdata.NewNarrow(e.cfg.rows, benchNarrowBatchRows)
	}
	return e.narrow
}

// The primary-key workloads' data.

// benchSplitmix scrambles a sequence number into a well-spread key.
func benchSplitmix(x uint64) int64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return int64((x ^ (x >> 31)) >> 1)
}

// benchAggBatches are the rows of the upsert workload, as in
// engine.BenchmarkAggregateUpsert: keys 0..n-1, each adding 1 to a sum and
// its key to a bitmap.
func benchAggBatches(schema *arrow.Schema, n, batchRows int) []arrow.RecordBatch {
	var recs []arrow.RecordBatch
	bm := roaring.New()
	var buf bytes.Buffer
	for from := 0; from < n; from += batchRows {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for k := from; k < min(from+batchRows, n); k++ {
			b.Field(0).(*array.Int64Builder).Append(int64(k))
			b.Field(1).(*array.Int64Builder).Append(1)
			bm.Clear()
			bm.Add(uint32(k))
			buf.Reset()
			if _, err := bm.WriteTo(&buf); err != nil {
				panic(fmt.Sprintf("roaring: %v", err))
			}
			b.Field(2).(*array.BinaryBuilder).Append(buf.Bytes())
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	return recs
}
