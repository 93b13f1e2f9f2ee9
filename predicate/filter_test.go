package predicate

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestFilterConcurrent filters one batch with one Bound from several
// goroutines (run it with -race): a Bound is shared by the streams of a scan.
func TestFilterConcurrent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testBatch(mem)
	defer rec.Release()
	e, err := Parse([]byte(`{"or": [{"in": ["user_id", [1, 7]]}, {"in": ["name", ["banana"]]}, {"gt": ["amount", "0.01"]},
		{"starts_with": ["name", "ap"]}, {"not_in": ["amount", ["1.00"]]}, {"lt": ["flag", true]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Bind(e, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				mask, err := b.Filter(context.Background(), mem, rec.Column, int(rec.NumRows()))
				if err != nil {
					t.Error(err)
					return
				}
				if got := countTrue(mask); got != 3 {
					t.Errorf("%d rows selected, want 3", got)
				}
				mask.Release()
			}
		})
	}
	wg.Wait()
}

func TestFilterErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testBatch(mem)
	defer rec.Release()
	e, err := Parse([]byte(`{"and": [{"is_not_null": "order_id"}, {"eq": ["user_id", 1]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Bind(e, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	sameType := func(int) arrow.Array { return rec.Column(0) } // user_id gets order_id's int64s: any array of the type will do
	if mask, err := b.Filter(context.Background(), mem, sameType, int(rec.NumRows())); err != nil {
		t.Errorf("same type: %v", err)
	} else {
		mask.Release()
	}
	for name, col := range map[string]func(int) arrow.Array{
		"wrong type":   func(i int) arrow.Array { return rec.Column(i + 2) },
		"wrong length": func(i int) arrow.Array { return rec.Column(i) },
		"missing":      func(int) arrow.Array { return nil },
	} {
		rows := int(rec.NumRows())
		if name == "wrong length" {
			rows--
		}
		if _, err := b.Filter(context.Background(), mem, col, rows); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Filter(ctx, mem, rec.Column, int(rec.NumRows())); err != context.Canceled {
		t.Errorf("canceled: %v", err)
	}
}
