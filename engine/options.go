package engine

import (
	"log/slog"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/logstore"
)

// Options configure an engine. The zero value means the defaults.
type Options struct {
	// DefaultBucketNum is bucket.num for tables that do not set it. Default 1.
	DefaultBucketNum int
	// MaxPartitions is max.partition.num, the most partitions one table may
	// have. Default catalog.DefaultMaxPartitions (1000).
	MaxPartitions int
	// Log configures every table's log.
	Log LogOptions
	// CatalogFS is the filesystem of the catalog, a pebble database.
	// Default: the real disk.
	CatalogFS vfs.FS
	// KVFS is the filesystem of the primary-key state, a pebble database.
	// Default: the real disk.
	KVFS vfs.FS
	// RetentionInterval is how often expired log segments are removed.
	// Default 1 minute.
	RetentionInterval time.Duration
	// IdleHeartbeat is how long an unbounded scan may be idle before it sends
	// an empty batch. Default 4 s (PROTOCOL.md promises at most 5 s).
	IdleHeartbeat time.Duration
	// Allocator is used for Arrow memory. Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Meter receives the engine's metrics. Default: none.
	Meter metric.Meter
	// Lake is where lake-enabled tables are tiered. Default: the filesystem
	// catalog in <dir>/lake.
	Lake LakeOptions
	// TieringInterval is how often the tiering scheduler looks for tables
	// whose table.datalake.freshness has passed: a round starts at most this
	// late. Default 100 ms.
	TieringInterval time.Duration
	// LakeCompactionInterval is how often the tiering scheduler compacts
	// each lake-enabled table's lake, after a round. Default 1 h.
	LakeCompactionInterval time.Duration
	// AutoPartition configures automatic partitions (autopartition.go).
	AutoPartition AutoPartitionOptions
	// OpenFiles is how many descriptors the data files may keep open at
	// once, however many buckets there are: half for the logs' segment files
	// (an LRU of handles, logstore.FileCache), a quarter each for the
	// tables of the primary-key state and of the catalog (pebble's
	// MaxOpenFiles). Files being read or written at the moment come on top.
	// At least MinOpenFiles. Default DefaultOpenFiles().
	OpenFiles int
}

// MinOpenFiles is the least Options.OpenFiles: pebble keeps a table cache of
// at least 64 files in each of its two stores.
const MinOpenFiles = 256

// maxDefaultOpenFiles caps the default of Options.OpenFiles: past it,
// keeping more idle files open saves little.
const maxDefaultOpenFiles = 1 << 16

// DefaultOpenFiles is the default of Options.OpenFiles: half the process's
// RLIMIT_NOFILE (the other half is for connections and the rest), within
// MinOpenFiles and 65536.
func DefaultOpenFiles() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return MinOpenFiles
	}
	return int(min(max(lim.Cur/2, MinOpenFiles), maxDefaultOpenFiles))
}

// WithLogSegmentBytes returns o with the log segment size set.
func (o Options) WithLogSegmentBytes(n int64) Options {
	o.Log.SegmentBytes = n
	return o
}

// WithWriterExpiration returns o with the idle time after which an
// idempotent writer's state is dropped set.
func (o Options) WithWriterExpiration(d time.Duration) Options {
	o.Log.WriterExpiration = d
	return o
}

func (o Options) withDefaults() Options {
	if o.DefaultBucketNum <= 0 {
		o.DefaultBucketNum = 1
	}
	if o.RetentionInterval <= 0 {
		o.RetentionInterval = time.Minute
	}
	if o.TieringInterval <= 0 {
		o.TieringInterval = 100 * time.Millisecond
	}
	if o.LakeCompactionInterval <= 0 {
		o.LakeCompactionInterval = time.Hour
	}
	if o.IdleHeartbeat <= 0 {
		o.IdleHeartbeat = 4 * time.Second
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.AutoPartition = o.AutoPartition.withDefaults()
	if o.OpenFiles == 0 {
		o.OpenFiles = DefaultOpenFiles()
	}
	return o
}

// pebbleOpenFiles is the MaxOpenFiles of each of the two pebble stores.
func (o Options) pebbleOpenFiles() int { return o.OpenFiles / 4 }

// LogOptions configure every table's log. The zero value means the
// defaults.
type LogOptions struct {
	// SegmentBytes is the size at which a bucket's active segment is rolled.
	// Default 256 MiB.
	SegmentBytes int64
	// WriterExpiration is how long an idempotent writer's state is kept
	// after its last batch. Default logstore.DefaultWriterExpiration.
	WriterExpiration time.Duration
	// Now is the clock for commit timestamps. Default time.Now.
	Now func() time.Time
	// FS is where the logs' files are. Default: the real disk.
	FS vfs.FS
}

// LakeOptions say where lake-enabled tables are tiered.
type LakeOptions struct {
	// Warehouse is the warehouse location: a directory or an object-store
	// URI that iceberg-go supports.
	Warehouse string
	// Catalog holds iceberg-go catalog properties ("type": "rest" or "sql",
	// "uri", ...). Empty means the filesystem catalog in Warehouse.
	Catalog map[string]string
	// Iceberg, when set, is the catalog to use instead of one opened from
	// Warehouse and Catalog (tests wrap one to inject faults).
	Iceberg icecatalog.Catalog
	// BeforeCommit, if set, is called before a tiering round commits; an
	// error abandons the commit there, as a crash would (tests).
	BeforeCommit func() error
}

// logOptions are the options of each table's log; their files share one
// cache of what OpenFiles leaves the pebble stores.
func (o Options) logOptions(onSync func(time.Duration)) logstore.Options {
	return logstore.Options{
		SegmentBytes: o.Log.SegmentBytes, WriterExpiration: o.Log.WriterExpiration, Now: o.Log.Now, FS: o.Log.FS,
		Logger: o.Logger, OnSync: onSync, Summarize: framestats.Merge,
		Files: logstore.NewFileCache(o.OpenFiles - 2*o.pebbleOpenFiles()),
	}
}
