package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/datadir"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/logstore"
)

// Data the catalog does not name is never deleted: startup moves it to
// <data>/quarantine/<time>-<id>, and table ids are never handed out again
// while data of theirs is on disk, so that a lost or rolled-back catalog
// costs no data and mixes no tables (docs/operations.md, "Corruption and
// repair").

// QuarantineDir is where data that no table owns is moved, under the data
// directory.
const QuarantineDir = datadir.QuarantineDir

// checkCatalog is run on open, before the catalog is opened for writing
// (which would replay its log into new files): data of a table id that the
// catalog never handed out means the catalog lost what it had committed, its
// log damaged or the catalog restored from an older copy. Open then refuses,
// naming the log, rather than serve without those tables.
func checkCatalog(dir string, d *datadir.TableData, opts Options) error {
	catDir := filepath.Join(dir, "catalog")
	wals, err := filepath.Glob(filepath.Join(catDir, "*.log"))
	if err != nil {
		return err
	}
	cat, err := catalog.Open(catDir, catalog.Options{ReadOnly: true, Logger: opts.Logger, FS: opts.CatalogFS})
	if errs.Is(err, errs.NotFound) {
		return nil // none was ever made there: the real open makes one
	}
	if err != nil {
		return fmt.Errorf("open catalog: %w", err)
	}
	next := cat.NextID()
	if err := cat.Close(); err != nil {
		return err
	}
	if d.MaxID() < next {
		return nil
	}
	why := fmt.Sprintf("Its log (%s) was damaged, or it was restored from an older copy", strings.Join(wals, ", "))
	if len(wals) == 0 {
		why = fmt.Sprintf("Its write-ahead log (%s) is missing: deleted, with what the catalog had not yet flushed to its tables", filepath.Join(catDir, "*.log"))
	}
	return fmt.Errorf("the catalog in %s is behind the table data: it hands out table ids from %d, yet data of table id %d is on disk (in %s or %s). %s. `fluxgate repair` does not mend a catalog (it cuts a table's damaged log). Restore a copy of %s that names every table; or, to start with no tables and every table's data moved to quarantine, move %s away",
		catDir, next, d.MaxID(), datadir.TablesDir(dir), filepath.Join(dir, QuarantineDir), why, catDir, catDir)
}

// checkTableData is run on open, before the tables are. A new catalog
// (catalog/ was deleted) takes its next id past every id with data on disk or
// primary-key state, whose data quarantineOrphans then moves aside. It
// returns the tables that cannot open because their data is in quarantine.
func (e *Engine) checkTableData(infos []*catalog.TableInfo, d *datadir.TableData) (map[int64]error, error) {
	stateID, err := e.kv.MaxTableID()
	if err != nil {
		return nil, fmt.Errorf("list primary-key state: %w", err)
	}
	if next := max(d.MaxID(), stateID) + 1; next > e.cat.NextID() {
		e.opts.Logger.Error("the catalog's next table id is behind the table data or primary-key state on disk (was catalog/ deleted?): tables it does not name have their data moved to quarantine, and their ids are not handed out again",
			"catalog", filepath.Join(e.dir, "catalog"), "next_id", next, "data", e.dir)
		if err := e.cat.ReserveIDs(next); err != nil {
			return nil, err
		}
	}
	unavailable := map[int64]error{}
	for _, info := range infos {
		if _, err := os.Stat(e.tableDir(info.TableID)); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		q, ok := d.Quarantined[info.TableID]
		if !ok {
			// Created just before a crash, or its data was removed by hand.
			e.opts.Logger.Warn("table has no data directory: it starts empty", "table", info.Path().String(), "path", e.tableDir(info.TableID))
			continue
		}
		unavailable[info.TableID] = errs.New(errs.DataLoss, "table %s is unavailable: its data (table id %d) is in quarantine at %s; with the server stopped, move it back to %s", info.Path(), info.TableID, q, e.tableDir(info.TableID))
		e.opts.Logger.Error("table data is in quarantine: the table stays unavailable until it is moved back",
			"table", info.Path().String(), "quarantined", q, "move_to", e.tableDir(info.TableID))
	}
	return unavailable, nil
}

// corruptTable returns the error a table's calls get when it failed to open
// on a damaged log, and nil when err is something else.
func (e *Engine) corruptTable(info *catalog.TableInfo, err error) error {
	var ce *logstore.CorruptError
	if !errors.As(err, &ce) {
		return nil
	}
	e.opts.Logger.Error("table log is corrupt: the table stays unavailable until an operator repairs it (fluxgate repair)",
		"table", info.Path().String(), "file", ce.Path, "position", ce.Pos, "problem", ce.Problem, "evidence", ce.Evidence)
	return errs.New(errs.DataLoss, "table %s is unavailable until an operator repairs its log: %w", info.Path(), ce)
}

// quarantineOrphans moves the table directories that the catalog does not
// name (a drop that crashed before removing its data, or a lost catalog)
// into the quarantine directory.
func (e *Engine) quarantineOrphans(d *datadir.TableData) {
	for _, id := range d.Tables {
		if _, err := e.cat.TableByID(id); err == nil {
			continue
		}
		if _, err := e.cat.PartitionByID(id); err == nil {
			continue
		}
		from := e.tableDir(id)
		to := datadir.QuarantinePath(e.dir, id, time.Now())
		if err := datadir.Move(from, to); err != nil {
			e.opts.Logger.Error("table data that the catalog does not name could not be moved to quarantine; it stays where it is",
				"table_id", id, "path", from, "err", err)
			continue
		}
		e.opts.Logger.Error("moved table data that the catalog does not name to quarantine (a drop that did not finish, or a lost or damaged catalog); delete it once you know it is not needed",
			"table_id", id, "from", from, "to", to)
	}
}
