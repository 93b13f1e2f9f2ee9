package lake

import (
	"context"
	"slices"
	"testing"
)

// Data files are written in __offset order and their manifest entries say
// so: sort_order_id is the table's sort order (by __offset), with the
// statistics carried over.
func TestDataFilesCarryTheSortOrder(t *testing.T) {
	ctx := context.Background()
	mem := checkedAllocator(t)
	info := usersInfo(t)
	_, lt := openLake(t, t.TempDir(), info)
	snap := commitRows(t, mem, lt, info, 1, 0, []int64{3, 4}, []string{"c", "d"}, nil)
	want := lt.current().SortOrder().OrderID()
	if want == 0 {
		t.Fatal("the lake table has no sort order")
	}
	scan, tasks, err := lt.plan(ctx, snap.ID, nil, 1, []string{"id"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Close()
	if len(tasks) == 0 {
		t.Fatal("no data files")
	}
	var rows int64
	for _, task := range tasks {
		f := task.File
		if f.SortOrderID() == nil || *f.SortOrderID() != want {
			t.Errorf("%s: sort_order_id %v, want %d", f.FilePath(), f.SortOrderID(), want)
		}
		if len(f.LowerBoundValues()) == 0 || len(f.UpperBoundValues()) == 0 || len(f.ColumnSizes()) == 0 || len(f.Partition()) == 0 {
			t.Errorf("%s lost its statistics or partition: bounds %v..%v, column sizes %v, partition %v", f.FilePath(), f.LowerBoundValues(), f.UpperBoundValues(), f.ColumnSizes(), f.Partition())
		}
		rows += f.Count()
	}
	if rows != 2 {
		t.Errorf("the files hold %d rows, want 2", rows)
	}
	if got := scanIDs(t, mem, lt, snap.ID, 1); !slices.Equal(got, []int64{3, 4}) {
		t.Errorf("bucket 1 holds %v, want [3 4]", got)
	}
}
