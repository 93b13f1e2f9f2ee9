package engine

import (
	"encoding/json"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/predicate"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// viewPlan is what a scan reads of a view: the view's columns (its system
// columns, then the table's), the ones it returns, the ones its filter reads,
// and the table columns to read from the log for them.
type viewPlan struct {
	view   *arrow.Schema // every column of the view
	system int           // how many system columns the view starts with
	out    []int         // view column of each result column, in the asked order
	need   []int         // view columns to build: results and filter columns, ascending
	read   []int         // table columns to read: the table columns among need, ascending
	filter *predicate.Bound
	schema *arrow.Schema // the result schema
}

// needNames are the names of the need columns.
func (p *viewPlan) needNames() []string {
	names := make([]string, len(p.need))
	for i, v := range p.need {
		names[i] = p.view.Field(v).Name
	}
	return names
}

// planView resolves a scan's columns and filter against the view.
func planView(info *catalog.TableInfo, view string, columns []string, filter json.RawMessage) (*viewPlan, error) {
	// The changelog's system columns come first, the lake's last.
	var system, lakeSystem []arrow.Field
	switch view {
	case protocol.ViewChangelog:
		system = changelogFields
	case protocol.ViewLake:
		lakeSystem = lake.SystemFields
	}
	fields := slices.Concat(system, info.ArrowSchema().Fields(), lakeSystem)
	p := &viewPlan{view: arrow.NewSchema(fields, nil), system: len(system)}
	if columns == nil {
		for i := range p.view.NumFields() {
			p.out = append(p.out, i)
		}
	}
	for _, name := range columns {
		i := slices.IndexFunc(p.view.Fields(), func(f arrow.Field) bool { return f.Name == name })
		if i < 0 {
			return nil, errs.New(errs.NotFound, "column %q does not exist in %s (columns: %s)", name, info.Path(), columnNames(p.view))
		}
		if slices.Contains(p.out, i) {
			return nil, errs.New(errs.Invalid, "column %q is projected twice", name)
		}
		p.out = append(p.out, i)
	}
	out := make([]arrow.Field, len(p.out))
	for i, v := range p.out {
		out[i] = p.view.Field(v)
	}
	p.schema = arrow.NewSchema(out, nil)
	p.need = slices.Clone(p.out)
	if len(filter) > 0 && string(filter) != "null" {
		e, err := predicate.Parse(filter)
		if err != nil {
			return nil, err
		}
		if p.filter, err = predicate.Bind(e, p.view); err != nil {
			return nil, err
		}
		p.need = append(p.need, p.filter.Columns()...)
	}
	slices.Sort(p.need)
	p.need = slices.Compact(p.need)
	ncols := info.ArrowSchema().NumFields()
	for _, v := range p.need {
		if v >= p.system && v-p.system < ncols {
			p.read = append(p.read, v-p.system)
		}
	}
	return p, nil
}

// needSchema is the schema of the records built for need.
func (p *viewPlan) needSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(p.need))
	for i, v := range p.need {
		fields[i] = p.view.Field(v)
	}
	return arrow.NewSchema(fields, nil)
}

// outPositions returns, for each result column, its position in need.
// messageColumns returns, for a read that sends frames as stored, each
// result column as a frame's message takes it: a table column by its
// position among the columns read; a changelog system column by its name
// in systemNames (it is made for each frame); nil when some result column
// is neither (the lake's system columns).
func (p *viewPlan) messageColumns(tableColumns int) (cols []logstore.MessageColumn, systemNames []string) {
	cols = make([]logstore.MessageColumn, len(p.out))
	systemNames = make([]string, len(p.out))
	for i, v := range p.out {
		switch c := v - p.system; {
		case c < 0:
			systemNames[i] = p.view.Field(v).Name
		case c < tableColumns:
			cols[i].Stored = slices.Index(p.read, c)
		default:
			return nil, nil
		}
	}
	return cols, systemNames
}

func (p *viewPlan) outPositions() []int {
	pos := make([]int, len(p.out))
	for i, v := range p.out {
		pos[i] = slices.Index(p.need, v)
	}
	return pos
}
