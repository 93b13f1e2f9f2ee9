// Package viewplan resolves what a scan reads of a view (log, $changelog, $lake,
// ...): its columns, the ones returned, the filter and the table columns it
// reads; and which partitions the filter rules out.
package viewplan

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/predicate"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Plan is what a scan reads of a view: the view's columns (its system
// columns, then the table's), the ones it returns, the ones its filter reads,
// and the table columns to read from the log for them.
type Plan struct {
	View   *arrow.Schema // every column of the view
	System int           // how many system columns the view starts with
	Out    []int         // view column of each result column, in the asked order
	Need   []int         // view columns to build: results and filter columns, ascending
	Read   []int         // table columns to read: the table columns among Need, ascending
	Filter *predicate.Bound
	Schema *arrow.Schema // the result schema
}

// NeedNames are the names of the Need columns.
func (p *Plan) NeedNames() []string {
	names := make([]string, len(p.Need))
	for i, v := range p.Need {
		names[i] = p.View.Field(v).Name
	}
	return names
}

// Resolve resolves a scan's columns and filter against the view named.
func Resolve(info *catalog.TableInfo, view string, columns []string, filter json.RawMessage) (*Plan, error) {
	// The changelog's system columns come first, the lake's last.
	var system, lakeSystem []arrow.Field
	switch view {
	case protocol.ViewChangelog:
		system = ChangelogFields
	case protocol.ViewLake:
		lakeSystem = lake.SystemFields
	}
	fields := slices.Concat(system, info.ArrowSchema().Fields(), lakeSystem)
	p := &Plan{View: arrow.NewSchema(fields, nil), System: len(system)}
	if columns == nil {
		for i := range p.View.NumFields() {
			p.Out = append(p.Out, i)
		}
	}
	for _, name := range columns {
		i := slices.IndexFunc(p.View.Fields(), func(f arrow.Field) bool { return f.Name == name })
		if i < 0 {
			return nil, errs.New(errs.NotFound, "column %s does not exist in %s (columns: %s)", errs.Quote(name), info.Path(), ColumnNames(p.View))
		}
		if slices.Contains(p.Out, i) {
			return nil, errs.New(errs.InvalidArgument, "column %s is projected twice", errs.Quote(name))
		}
		p.Out = append(p.Out, i)
	}
	out := make([]arrow.Field, len(p.Out))
	for i, v := range p.Out {
		out[i] = p.View.Field(v)
	}
	p.Schema = arrow.NewSchema(out, nil)
	p.Need = slices.Clone(p.Out)
	if len(filter) > 0 && string(filter) != "null" {
		e, err := predicate.Parse(filter)
		if err != nil {
			return nil, err
		}
		if p.Filter, err = predicate.Bind(e, p.View); err != nil {
			return nil, err
		}
		p.Need = append(p.Need, p.Filter.Columns()...)
	}
	slices.Sort(p.Need)
	p.Need = slices.Compact(p.Need)
	ncols := info.ArrowSchema().NumFields()
	for _, v := range p.Need {
		if v >= p.System && v-p.System < ncols {
			p.Read = append(p.Read, v-p.System)
		}
	}
	return p, nil
}

// NeedSchema is the schema of the records built for Need.
func (p *Plan) NeedSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(p.Need))
	for i, v := range p.Need {
		fields[i] = p.View.Field(v)
	}
	return arrow.NewSchema(fields, nil)
}

// MessageColumns returns, for a read that sends frames as stored, each
// result column as a frame's message takes it: a table column by its
// position among the columns read; a changelog system column by its name
// in systemNames (it is made for each frame); nil when some result column
// is neither (the lake's system columns).
func (p *Plan) MessageColumns(tableColumns int) (cols []logstore.MessageColumn, systemNames []string) {
	cols = make([]logstore.MessageColumn, len(p.Out))
	systemNames = make([]string, len(p.Out))
	for i, v := range p.Out {
		switch c := v - p.System; {
		case c < 0:
			systemNames[i] = p.View.Field(v).Name
		case c < tableColumns:
			cols[i].Stored = slices.Index(p.Read, c)
		default:
			return nil, nil
		}
	}
	return cols, systemNames
}

// OutPositions returns, for each result column, its position in Need.
func (p *Plan) OutPositions() []int {
	pos := make([]int, len(p.Out))
	for i, v := range p.Out {
		pos[i] = slices.Index(p.Need, v)
	}
	return pos
}

// ColumnNames lists a schema's column names, for messages.
func ColumnNames(s *arrow.Schema) string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
