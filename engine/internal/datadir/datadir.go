// Package datadir is the layout of a data directory on disk: its lock, the
// tables' data directories and the quarantine beside them.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// QuarantineDir is where data that no table owns is moved, under the data
// directory.
const QuarantineDir = "quarantine"

// TableData lists the table ids that have data on disk: a directory in
// tables/, or one in quarantine/ (its name ends in -<id>).
type TableData struct {
	Tables      []int64
	Quarantined map[int64]string // id → path
}

// TablesDir is the directory of the tables' data.
func TablesDir(dir string) string { return filepath.Join(dir, "tables") }

// TableDir is the data directory of table (or partition) id.
func TableDir(dir string, id int64) string { return filepath.Join(TablesDir(dir), fmt.Sprint(id)) }

// QuarantinePath is where table id's data is moved to when quarantined at.
func QuarantinePath(dir string, id int64, at time.Time) string {
	return filepath.Join(dir, QuarantineDir, fmt.Sprintf("%s-%d", at.UTC().Format("20060102T150405Z"), id))
}

// Scan lists the table data on disk in dir.
func Scan(dir string) (*TableData, error) {
	d := &TableData{Quarantined: map[int64]string{}}
	ents, err := readDirIfAny(TablesDir(dir))
	if err != nil {
		return nil, err
	}
	for _, ent := range ents {
		if id, err := strconv.ParseInt(ent.Name(), 10, 64); err == nil && ent.IsDir() {
			d.Tables = append(d.Tables, id)
		}
	}
	qdir := filepath.Join(dir, QuarantineDir)
	if ents, err = readDirIfAny(qdir); err != nil {
		return nil, err
	}
	for _, ent := range ents {
		if id, ok := quarantinedID(ent.Name()); ok {
			d.Quarantined[id] = filepath.Join(qdir, ent.Name())
		}
	}
	return d, nil
}

// MaxID returns the largest id with data on disk, 0 if none.
func (d *TableData) MaxID() int64 {
	var m int64
	for _, id := range d.Tables {
		m = max(m, id)
	}
	for id := range d.Quarantined {
		m = max(m, id)
	}
	return m
}

// quarantinedID parses the table id at the end of a quarantine entry's name.
func quarantinedID(name string) (int64, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(name[i+1:], 10, 64)
	return id, err == nil && id > 0
}

func readDirIfAny(dir string) ([]os.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return ents, err
}

// Move renames from to to, creating to's parent, and syncs both parents.
func Move(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Rename(from, to); err != nil {
		return err
	}
	return errors.Join(syncDir(filepath.Dir(from)), syncDir(filepath.Dir(to)))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
