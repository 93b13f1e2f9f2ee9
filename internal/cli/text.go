package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// WriteAligned prints a header and rows as an aligned text table.
func WriteAligned(w io.Writer, header []string, rows [][]string) error {
	bw := bufio.NewWriter(w)
	widths := make([]int, len(header))
	all := append([][]string{header}, rows...)
	for _, row := range all {
		for i, v := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(v))
		}
	}
	for _, row := range all {
		if err := WriteRow(bw, widths, row); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteRow prints one row of an aligned table: cells two spaces apart, each
// padded to its column's width, which a wider cell widens for later rows.
func WriteRow(w io.StringWriter, widths []int, row []string) error {
	var sb strings.Builder
	for i, v := range row {
		if i > 0 {
			sb.WriteString("  ")
		}
		n := utf8.RuneCountInString(v)
		widths[i] = max(widths[i], n)
		sb.WriteString(v)
		if i < len(row)-1 {
			sb.WriteString(strings.Repeat(" ", widths[i]-n))
		}
	}
	_, err := w.WriteString(strings.TrimRight(sb.String(), " ") + "\n")
	return err
}

// FormatValue renders one value for a text table: NULL for nulls, text for
// strings, and arrow's own rendering of everything else.
func FormatValue(col arrow.Array, i int) string {
	if col.IsNull(i) {
		return "NULL"
	}
	var s string
	switch a := col.(type) {
	case *array.String:
		s = a.Value(i)
	case *array.LargeString:
		s = a.Value(i)
	case *array.Timestamp:
		s = FormatTimestamp(a, i, " ")
	case *array.Decimal128:
		s = a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	default:
		s = col.ValueStr(i)
	}
	// Keep one row on one line.
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

// FormatTimestamp renders a timestamp as ISO 8601 with sep between date and
// time, with a zone only for a zoned type.
func FormatTimestamp(a *array.Timestamp, i int, sep string) string {
	dt := a.DataType().(*arrow.TimestampType)
	layout := "2006-01-02" + sep + "15:04:05.999999999"
	if dt.TimeZone != "" {
		layout += "Z07:00"
	}
	return a.Value(i).ToTime(dt.Unit).Format(layout)
}

// HumanCount renders a count or rate short: 1.23G, 4.56M, 78.9k or 123.
func HumanCount(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// WriteJSON writes v as indented JSON and a newline. A json.RawMessage is
// re-indented as it is, keeping the server's field order.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	if raw, ok := v.(json.RawMessage); ok {
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			return err
		}
	} else {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}
