// Package lake keeps fluxgate tables as Iceberg tables through iceberg-go
// (PROTOCOL.md §7): it maps a table's schema and buckets to an Iceberg schema
// and partition spec, writes a tiering round's rows and deletes as Parquet
// files and commits them with the round's offsets in one snapshot, and scans a
// snapshot back, bucket by bucket, with projection and filter pushed down.
// The lake is the only record of tiering progress: a snapshot's summary says
// which offsets it holds.
package lake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	_ "github.com/apache/iceberg-go/catalog/rest"  // registers the REST catalog for Options.Catalog
	_ "github.com/apache/iceberg-go/catalog/sql"   // registers the SQL catalog for Options.Catalog
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// warehouses (AWS S3, MinIO, ...)
	"github.com/apache/iceberg-go/table"
	_ "modernc.org/sqlite" // the "sqlite" driver, so that the SQL catalog needs no service either

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
)

// Options say where the lake is.
type Options struct {
	// Warehouse is the warehouse location: a directory or an object-store
	// URI that iceberg-go supports.
	Warehouse string
	// Catalog holds iceberg-go catalog properties ("type": "rest" or "sql",
	// "uri", ...). Empty means the filesystem (hadoop-layout) catalog in
	// Warehouse, which needs no service.
	Catalog map[string]string
	// Iceberg, when set, is the catalog to use instead of one opened from
	// Warehouse and Catalog: tests wrap a catalog in it to inject faults.
	Iceberg icecatalog.Catalog
	// BeforeCommit, if set, is called when a round has written its files
	// and is about to commit them; an error abandons the commit there,
	// leaving the files unreferenced, as a crash at that point would. Tests
	// use it to prove that such a round loses and repeats nothing.
	BeforeCommit func() error
}

// Lake is an open Iceberg catalog.
type Lake struct {
	cat          icecatalog.Catalog
	beforeCommit func() error
	// localRoot is the warehouse directory of a filesystem catalog on the
	// local disk, whose paths new tables write as file:// URIs; "" otherwise.
	localRoot string
}

// Open opens the lake's catalog.
func Open(ctx context.Context, opts Options) (*Lake, error) {
	if opts.Iceberg != nil {
		return &Lake{cat: opts.Iceberg}, nil
	}
	props := iceberg.Properties(maps.Clone(opts.Catalog))
	if len(props) == 0 || props["type"] == "" || props["type"] == string(icecatalog.Hadoop) {
		if strings.Contains(opts.Warehouse, "://") && !strings.HasPrefix(opts.Warehouse, "file://") && props["allow-unsafe-commits"] != "true" {
			return nil, fmt.Errorf("lake warehouse %s: the filesystem catalog cannot commit atomically on an object store; use a SQL or REST catalog (--lake-catalog type=sql,... or type=rest,...) with it", opts.Warehouse)
		}
		if !strings.Contains(opts.Warehouse, "://") {
			if err := os.MkdirAll(opts.Warehouse, 0o755); err != nil {
				return nil, fmt.Errorf("create lake warehouse: %w", err)
			}
		}
		cat, err := hadoop.NewCatalog("fluxgate", opts.Warehouse, props)
		if err != nil {
			return nil, fmt.Errorf("open lake catalog: %w", err)
		}
		l := &Lake{cat: cat, beforeCommit: opts.BeforeCommit}
		if !strings.Contains(opts.Warehouse, "://") || strings.HasPrefix(opts.Warehouse, "file://") {
			l.localRoot = localPath(opts.Warehouse)
		}
		return l, nil
	}
	if opts.Warehouse != "" && props["warehouse"] == "" {
		props["warehouse"] = opts.Warehouse
		if props["type"] != string(icecatalog.REST) { // a REST catalog's warehouse may be a name its service knows
			props["warehouse"] = fileURI(opts.Warehouse)
		}
	}
	cat, err := icecatalog.Load(ctx, "fluxgate", props)
	if err != nil {
		return nil, fmt.Errorf("open lake catalog (type %s): %w", props["type"], err)
	}
	return &Lake{cat: cat, beforeCommit: opts.BeforeCommit}, nil
}

// fileURI makes a local directory a file:// URI, which the catalog then
// writes into every path of the lake: a path without a scheme is read
// against whatever default filesystem a reader has (HDFS for many Spark
// setups), and some (Trino) refuse it.
func fileURI(warehouse string) string {
	if strings.Contains(warehouse, "://") {
		return warehouse
	}
	if abs, err := filepath.Abs(warehouse); err == nil {
		warehouse = abs
	}
	return "file://" + filepath.ToSlash(warehouse)
}

// localPath is a local warehouse as an absolute path, from a path or a
// file:// URI.
func localPath(warehouse string) string {
	warehouse = strings.TrimPrefix(warehouse, "file://")
	if abs, err := filepath.Abs(warehouse); err == nil {
		return abs
	}
	return warehouse
}

// DefaultWarehouse is the embedded warehouse inside a data directory.
func DefaultWarehouse(dataDir string) string {
	abs, err := filepath.Abs(filepath.Join(dataDir, "lake"))
	if err != nil {
		return filepath.Join(dataDir, "lake")
	}
	return abs
}

// Close releases the catalog.
func (l *Lake) Close() error {
	if c, ok := l.cat.(icecatalog.Closer); ok {
		return c.Close()
	}
	return nil
}

func identifier(info *catalog.TableInfo) table.Identifier {
	p := info.Path()
	return table.Identifier{p.Database, p.Table}
}

// Ensure creates the lake table of info, or loads it if it exists. An
// Iceberg table of the same name that belongs to no fluxgate table, or to a
// dropped one and already holds data, is FAILED_PRECONDITION: fluxgate does
// not take over tables it did not make.
//
// It may run for the same table at once (creating a table races the
// tiering scheduler, which opens a partitioned table's lake as soon as the
// catalog lists it), and the loser of a create or of a schema change gets
// ErrCommitFailed: it loads the table the winner made and goes on.
func (l *Lake) Ensure(ctx context.Context, info *catalog.TableInfo) (*Table, error) {
	m, err := newMapping(info)
	if err != nil {
		return nil, err
	}
	ident := identifier(info)
	for attempt := 1; ; attempt++ {
		tbl, err := l.ensure(ctx, ident, info, m)
		if err == nil {
			m.bind(tbl.Schema(), tbl.Spec())
			return &Table{lake: l, m: m, tableID: info.TableID, tbl: tbl}, nil
		}
		retry := errors.Is(err, table.ErrCommitFailed) || errors.Is(err, icecatalog.ErrTableAlreadyExists) || errors.Is(err, errCreatedMeanwhile)
		if attempt == ensureAttempts || !retry {
			return nil, fmt.Errorf("lake table of %s: %w", info.Path(), err)
		}
		select { // a claim of the metadata version may be held a moment longer
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
		}
	}
}

// ensureAttempts bounds Ensure's attempts against concurrent commits.
const ensureAttempts = 5

// errCreatedMeanwhile is a create that failed because another made the
// table first.
var errCreatedMeanwhile = errors.New("the table was created meanwhile")

// ensure is one attempt of Ensure.
func (l *Lake) ensure(ctx context.Context, ident table.Identifier, info *catalog.TableInfo, m *mapping) (*table.Table, error) {
	tbl, err := l.cat.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, icecatalog.ErrNoSuchTable):
		if tbl, err = l.create(ctx, ident, m); err != nil {
			if _, lerr := l.cat.LoadTable(ctx, ident); lerr == nil {
				err = fmt.Errorf("%w: %w", errCreatedMeanwhile, err)
			}
		}
	case err == nil:
		owner := tbl.Properties()[PropTableID]
		if owner != strconv.FormatInt(info.TableID, 10) {
			if owner == "" || tbl.CurrentSnapshot() != nil {
				return nil, errs.New(errs.FailedPrecondition, "%s: the lake already has an Iceberg table %s that is not this table's (table id %q); drop it or rename this table", info.Path(), strings.Join(ident, "."), owner)
			}
			// An empty table left by a dropped table of the same name.
			if err = l.cat.DropTable(ctx, ident); err == nil {
				tbl, err = l.create(ctx, ident, m)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return evolve(ctx, tbl, m)
}

// evolve adds the table's columns that the Iceberg table lacks (added by
// alter-table since it was made), before the system columns, as Fluss does.
func evolve(ctx context.Context, tbl *table.Table, m *mapping) (*table.Table, error) {
	var missing []iceberg.NestedField
	for _, f := range m.schema.Fields() {
		if _, ok := tbl.Schema().FindFieldByName(f.Name); !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return tbl, nil
	}
	tx := tbl.NewTransaction()
	// With the name mapping, so that the update adds the new columns to it.
	us := tx.UpdateSchema(true, false, table.WithNameMapping(tbl.Metadata().NameMapping()))
	for _, f := range missing {
		us = us.AddColumn([]string{f.Name}, f.Type, f.Doc, false, nil).MoveBefore([]string{f.Name}, []string{ColBucket})
	}
	if err := us.Commit(); err != nil {
		return nil, fmt.Errorf("add columns to the lake table: %w", err)
	}
	return tx.Commit(ctx)
}

func (l *Lake) create(ctx context.Context, ident table.Identifier, m *mapping) (*table.Table, error) {
	ns := table.Identifier{ident[0]}
	if err := l.cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, icecatalog.ErrNamespaceAlreadyExists) {
		return nil, err
	}
	sort, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{m.fieldID(ColOffset)},
		Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}})
	if err != nil {
		return nil, err
	}
	if l.localRoot == "" {
		return l.cat.CreateTable(ctx, ident, m.schema, icecatalog.WithPartitionSpec(&m.spec),
			icecatalog.WithSortOrder(sort), icecatalog.WithProperties(m.props))
	}
	// A local filesystem catalog would make the location the plain path
	// (iceberg-go's drops the scheme), and every file of the table is named
	// after it; a path without a scheme is read against whatever default
	// filesystem a reader has (HDFS for many Spark and Trino setups). So the
	// table is created by a commit that sets its location as a file:// URI;
	// its metadata files, which the catalog names, stay plain paths.
	loc := fileURI(filepath.Join(append([]string{l.localRoot}, ident...)...))
	meta, err := table.NewMetadata(m.schema, &m.spec, sort, loc, m.props)
	if err != nil {
		return nil, err
	}
	spec, order := meta.PartitionSpec(), meta.SortOrder()
	updates := []table.Update{
		table.NewAssignUUIDUpdate(meta.TableUUID()),
		table.NewUpgradeFormatVersionUpdate(meta.Version()),
		table.NewAddSchemaUpdate(meta.CurrentSchema()),
		table.NewSetCurrentSchemaUpdate(-1),
		table.NewAddPartitionSpecUpdate(&spec, true),
		table.NewSetDefaultSpecUpdate(-1),
		table.NewAddSortOrderUpdate(&order),
		table.NewSetDefaultSortOrderUpdate(-1),
		table.NewSetLocationUpdate(loc),
		table.NewSetPropertiesUpdate(meta.Properties()),
	}
	if _, _, err := l.cat.CommitTable(ctx, ident, []table.Requirement{table.AssertCreate()}, updates); err != nil {
		return nil, err
	}
	return l.cat.LoadTable(ctx, ident)
}

// Drop removes the lake table of a dropped fluxgate table, if it is that
// table's; a missing one is no error.
func (l *Lake) Drop(ctx context.Context, info *catalog.TableInfo) error {
	ident := identifier(info)
	tbl, err := l.cat.LoadTable(ctx, ident)
	if errors.Is(err, icecatalog.ErrNoSuchTable) {
		return nil
	}
	if err != nil {
		return err
	}
	if tbl.Properties()[PropTableID] != strconv.FormatInt(info.TableID, 10) {
		return nil
	}
	if p, ok := l.cat.(icecatalog.PurgeableTable); ok {
		return p.PurgeTable(ctx, ident)
	}
	return l.cat.DropTable(ctx, ident)
}

// Table is one fluxgate table's Iceberg table. Commits are serialized by the
// caller (one tiering round at a time per table); reads may run at any time.
type Table struct {
	lake    *Lake
	m       *mapping
	tableID int64

	mu    sync.RWMutex
	tbl   *table.Table // replaced by each commit
	parts struct {     // the partitions of one snapshot, once listed
		snapshot int64
		parts    []Partition
	}

	idx *keyIndex // of a primary-key table; used by commits, which are serialized

	filesRead, bytesRead atomic.Int64 // by scans (ScanStats)
}

func (t *Table) current() *table.Table {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.tbl
}

// Current returns the latest snapshot committed by tiering, or nil if there
// is none.
func (t *Table) Current() (*Snapshot, error) {
	return snapshotOf(t.current().CurrentSnapshot())
}

// Location is the Iceberg table's location, and MetadataLocation its
// current metadata file, for readers outside fluxgate: a URI, also where the
// filesystem catalog names the file by a plain path.
func (t *Table) Location() string         { return t.current().Location() }
func (t *Table) MetadataLocation() string { return fileURI(t.current().MetadataLocation()) }

// Metadata is the Iceberg table's current metadata, as its current metadata
// file holds it.
func (t *Table) Metadata() table.Metadata { return t.current().Metadata() }

func (m *mapping) fieldID(name string) int {
	f, _ := m.schema.FindFieldByName(name)
	return f.ID
}
