package main

// Input errors that say where: a batch that fails to decode is decoded again
// row by row, and the bad row value by value, so that the error names the
// line, the column, the value and the type it should have been.

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// badCell is one value of a row that failed to decode, with a check that
// decodes that value alone.
type badCell struct {
	field arrow.Field // the table's column
	value string      // as the input writes it, quoted
	check func() error
}

// locateBadRow turns batchErr, of a batch whose rows are on lines, into an
// error naming (with at) the first row that fails checkRow and, when one of
// its values fails alone, that value. It runs only once a whole batch failed.
func locateBadRow(opts inputOptions, at func(line int) string, lines []int, batchErr error, cells func(row int) []badCell, checkRow func(row int) error) error {
	for i, line := range lines {
		rowErr := checkRow(i)
		if rowErr == nil {
			continue
		}
		for _, c := range cells(i) {
			if c.check() != nil {
				return fmt.Errorf("%s: column %s: %s is not %s", at(line), c.field.Name, c.value, typeWithHint(opts, c.field))
			}
		}
		return fmt.Errorf("%s: %w", at(line), rowErr)
	}
	return fmt.Errorf("%s: %w", opts.name, batchErr)
}

// typeWithHint is "a DOUBLE", "an INT", with what a value of a zoned
// timestamp needs.
func typeWithHint(opts inputOptions, f arrow.Field) string {
	name := opts.sqlTypes[f.Name]
	if name == "" {
		name = f.Type.String()
	}
	article := "a "
	if strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		article = "an "
	}
	if ts, ok := f.Type.(*arrow.TimestampType); ok && ts.TimeZone != "" {
		return article + name + " (an ISO-8601 time with a zone, Z or +hh:mm, or an integer)"
	}
	return article + name
}

// decodeCheck is the error of a decode, releasing what it decoded.
func decodeCheck(rec arrow.RecordBatch, err error) error {
	if rec != nil {
		rec.Release()
	}
	return err
}
