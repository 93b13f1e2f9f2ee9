package engine

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// CreateDatabase creates a database.
func (e *Engine) CreateDatabase(name string, ifNotExists bool) error {
	return e.cat.CreateDatabase(name, ifNotExists)
}

// DropDatabase drops a database; with cascade, its tables and their data too.
func (e *Engine) DropDatabase(ctx context.Context, name string, ifExists, cascade bool) error {
	e.tables.LockPartitions()
	parts := map[int64][]*catalog.Partition{} // of the partitioned tables, before the drop forgets them
	if tables, err := e.cat.ListTables(name); err == nil {
		for _, info := range tables {
			parts[info.TableID] = e.cat.Partitions(info.TableID)
		}
	}
	dropped, err := e.cat.DropDatabase(name, ifExists, cascade)
	e.tables.UnlockPartitions() // before waiting for lake rounds (removeTable)
	for _, info := range dropped {
		err = errors.Join(err, e.removePartitions(ctx, info, parts[info.TableID]), e.removeTable(ctx, info))
	}
	return err
}

// ListDatabases lists the databases, sorted.
func (e *Engine) ListDatabases() []string { return e.cat.ListDatabases() }

// CreateTable creates a table from spec and opens its log. With ifNotExists an
// existing table's info is returned instead of an error.
func (e *Engine) CreateTable(ctx context.Context, spec protocol.TableSpec, ifNotExists bool) (*protocol.TableInfo, error) {
	info, err := e.createTable(ctx, spec, ifNotExists)
	if err != nil {
		return nil, err
	}
	return &info.TableInfo, nil
}

func (e *Engine) createTable(ctx context.Context, spec protocol.TableSpec, ifNotExists bool) (*catalog.TableInfo, error) {
	if path, err := protocol.ParseTablePath(spec.Table); err == nil && path.View != "" {
		return nil, errs.New(errs.InvalidArgument, "table name %q: a view ($%s) cannot be created", spec.Table, path.View)
	}
	// A table the lake cannot hold is refused before it exists.
	if norm, err := catalog.NormalizeSpec(spec, catalog.Defaults{BucketNum: e.opts.DefaultBucketNum}); err == nil && norm.DatalakeEnabled() {
		if err := lake.Check(norm); err != nil {
			return nil, err
		}
	}
	info, created, err := e.cat.CreateTable(spec, ifNotExists)
	if err != nil || !created {
		return info, err
	}
	err = e.lakes.Ensure(ctx, info)
	if err == nil && !info.IsPartitioned() { // a partitioned table's partitions hold its data
		_, err = e.tables.Open(info)
	}
	if err != nil {
		// Leave no half-created table behind.
		_, dropErr := e.cat.DropTable(info.Path(), true)
		return nil, errors.Join(err, dropErr)
	}
	e.runAutoPartitions(ctx, info)
	return info, nil
}

// DropTable drops a table and deletes its data. Open scans of it end with
// errs.NotFound.
func (e *Engine) DropTable(ctx context.Context, name string, ifExists bool) error {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return err
	}
	if path.View != "" {
		return errs.New(errs.FailedPrecondition, "%s is a view of %s and cannot be dropped by itself", path.FullName(), path)
	}
	e.tables.LockPartitions()
	var parts []*catalog.Partition // listed before the drop forgets them
	if info, err := e.cat.Table(path); err == nil {
		parts = e.cat.Partitions(info.TableID)
	}
	info, err := e.cat.DropTable(path, ifExists)
	e.tables.UnlockPartitions() // before waiting for lake rounds (removeTable)
	if err != nil || info == nil {
		return err
	}
	return errors.Join(e.removePartitions(ctx, info, parts), e.removeTable(ctx, info))
}

func (e *Engine) removeTable(ctx context.Context, info *catalog.TableInfo) error {
	t, ok := e.tables.Remove(info.TableID)
	var err error
	if ok && t.PK != nil {
		// Writes in flight commit before the state goes, or they would
		// leave rows of the dropped table behind.
		defer t.PK.Quiesce()()
	}
	// A tiering round in progress (of the table, or of the partitioned
	// table a partition is of) ends before the log and the lake table go,
	// so that it cannot read a closed log or write into a dropped lake
	// table. The table is already gone from the catalog, so the drop waits
	// even past ctx: a round ends at its own context's end. The caller
	// holds no partMu: the wait lasts as long as the round.
	defer e.lakes.WaitRound(info)()
	if ok {
		t.Dropped.Store(true)
		err = t.Log.Close()
	}
	if info.IsPrimaryKey() {
		err = errors.Join(err, e.kv.DropTable(info.TableID))
	}
	e.lakes.Drop(ctx, info)
	if rmErr := os.RemoveAll(e.tableDir(info.TableID)); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("remove data of %s: %w", info.Path(), rmErr))
	}
	return err
}

// TableEntry is a table as DescribeTable and ListTables give it: its
// definition, and what a front end needs that is derived from it.
type TableEntry struct {
	Path   protocol.TablePath
	Info   *protocol.TableInfo
	Schema *arrow.Schema // the columns as Arrow, as reads return them
	// Meta is the plan metadata of a read of the whole table.
	Meta protocol.PlanMeta
}

func entryOf(info *catalog.TableInfo) TableEntry {
	return TableEntry{
		Path:   info.Path(),
		Info:   &info.TableInfo,
		Schema: info.ArrowSchema(),
		Meta:   protocol.PlanMeta{TableID: info.TableID, SchemaID: info.SchemaID, Buckets: info.BucketCount()},
	}
}

// DescribeTable returns a table's definition.
func (e *Engine) DescribeTable(name string) (TableEntry, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return TableEntry{}, err
	}
	info, err := e.cat.Table(protocol.TablePath{Database: path.Database, Table: path.Table})
	if err != nil {
		return TableEntry{}, err
	}
	return entryOf(info), nil
}

// ListTables lists the tables of a database, or of all databases for "".
func (e *Engine) ListTables(database string) ([]TableEntry, error) {
	infos, err := e.cat.ListTables(database)
	if err != nil {
		return nil, err
	}
	entries := make([]TableEntry, len(infos))
	for i, info := range infos {
		entries[i] = entryOf(info)
	}
	return entries, nil
}

// AlterTable changes the alterable options and adds nullable columns.
func (e *Engine) AlterTable(ctx context.Context, name string, set map[string]string, reset []string, addColumns []protocol.Column) (*protocol.TableInfo, error) {
	info, err := e.alterTable(ctx, name, set, reset, addColumns)
	if err != nil {
		return nil, err
	}
	// With the alter's locks released: a check creates and drops partitions.
	e.runAutoPartitions(ctx, info)
	return &info.TableInfo, nil
}

func (e *Engine) alterTable(ctx context.Context, name string, set map[string]string, reset []string, addColumns []protocol.Column) (*catalog.TableInfo, error) {
	path, err := protocol.ParseTablePath(name)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.FailedPrecondition, "%s is a view and cannot be altered", path.FullName())
	}
	e.alterMu.Lock()
	defer e.alterMu.Unlock()
	// A partitioned table's partitions are altered with it, creating and
	// dropping partitions waits.
	e.tables.LockPartitions()
	defer e.tables.UnlockPartitions()
	old, err := e.cat.Table(path)
	if err != nil {
		return nil, err
	}
	var tables []*table.Table // the table, or each open partition of a partitioned one
	var parts []*catalog.Partition
	if old.IsPartitioned() {
		for _, p := range e.cat.Partitions(old.TableID) {
			t, err := e.tables.ByID(p.PartitionID)
			if errs.Is(err, errs.DataLoss) {
				// Unavailable until a restart, which opens it under the
				// catalog's definition then: the alter has nothing of it
				// to change now.
				continue
			}
			if err != nil {
				return nil, err
			}
			tables, parts = append(tables, t), append(parts, p)
		}
	} else {
		t, err := e.tables.Table(old)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	next, err := catalog.ValidateAlter(old, set, reset, addColumns)
	if err != nil {
		return nil, err
	}
	// The lake table takes the new columns first, so that a failure leaves
	// the alter undone; writes go on meanwhile (a lake call can be slow).
	if err := e.lakes.Ensure(ctx, next); err != nil {
		return nil, err
	}
	for _, t := range tables {
		if next.SchemaID != old.SchemaID && t.PK != nil {
			// No primary-key write may interleave with a schema change: each
			// reads and stores rows in one schema (pkwrite).
			defer t.PK.Quiesce()()
		}
	}
	info, err := e.cat.AlterTable(path, set, reset, addColumns)
	if err != nil {
		return nil, err
	}
	for i, t := range tables {
		physical := info
		if parts != nil {
			physical = info.ForPartition(parts[i])
		}
		if err := e.applyAlter(t, physical); err != nil {
			return nil, err
		}
	}
	return info, nil
}

// applyAlter gives an open table its altered definition. Options change in
// place; added columns make a new schema, which streams opened from now on
// read and write with. Open streams go on in theirs: log batches keep their
// schema id, and rows written before read their added columns as NULL.
func (e *Engine) applyAlter(t *table.Table, info *catalog.TableInfo) error {
	cur := t.Current()
	sch := &table.Schema{}
	if info.SchemaID == cur.Info.SchemaID {
		*sch = *cur
		sch.Info = info
	} else {
		var err error
		if sch, err = table.NewSchema(info, e.opts.Allocator); err != nil {
			return err
		}
	}
	t.SetSchema(sch)
	return nil
}

// TablePathOf returns the path of the open table with id (a ticket's
// table_id), for checking permissions on what a ticket reads.
func (e *Engine) TablePathOf(id int64) (protocol.TablePath, error) {
	if info, err := e.cat.TableByID(id); err == nil && info.IsPartitioned() {
		return info.Path(), nil
	}
	t, err := e.tables.ByID(id)
	if err != nil {
		return protocol.TablePath{}, err
	}
	return t.Current().Info.Path(), nil
}
