package protocol

import (
	"strings"
	"unicode"

	"github.com/fluxgate-io/fluxgate/errs"
)

// DefaultDatabase is the database of a table name without a database part; it
// is created when a catalog is first opened.
const DefaultDatabase = "fluss"

// TablePath names a table, and optionally one of its views: ViewChangelog or
// ViewLake, the views a table name may select with a `$` suffix.
type TablePath struct {
	Database string
	Table    string
	View     string // "", ViewChangelog or ViewLake
}

// ParseTablePath parses `[database.]table[$view]`.
func ParseTablePath(s string) (TablePath, error) {
	name, view, hasView := strings.Cut(s, "$")
	var p TablePath
	if hasView {
		if view != ViewChangelog && view != ViewLake {
			return p, errs.New(errs.InvalidArgument, "table name %s: unknown view %s: expected $changelog or $lake", errs.Quote(s), errs.Quote("$"+view))
		}
		p.View = view
	}
	db, table, qualified := strings.Cut(name, ".")
	if !qualified {
		db, table = DefaultDatabase, name
	}
	if err := validateName("database", db); err != nil {
		return TablePath{}, errs.New(errs.InvalidArgument, "table name %s: %w", errs.Quote(s), err)
	}
	if err := validateName("table", table); err != nil {
		return TablePath{}, errs.New(errs.InvalidArgument, "table name %s: %w", errs.Quote(s), err)
	}
	p.Database, p.Table = db, table
	return p, nil
}

// ValidateDatabaseName checks a database name against the naming rules.
func ValidateDatabaseName(name string) error { return validateName("database", name) }

// String returns `database.table`, without the view.
func (p TablePath) String() string { return p.Database + "." + p.Table }

// FullName returns `database.table`, plus `$view` when a view is selected.
func (p TablePath) FullName() string {
	if p.View == "" {
		return p.String()
	}
	return p.String() + "$" + p.View
}

// MaxNameLen is the longest database, table or column name, in bytes.
const MaxNameLen = 200

func validateName(what, name string) error {
	if name == "" || len(name) > MaxNameLen {
		return errs.New(errs.InvalidArgument, "%s name %s is %d bytes long; it must be 1 to %d", what, errs.Quote(name), len(name), MaxNameLen)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return errs.New(errs.InvalidArgument, "%s name %s may contain only letters, digits, '_' and '-'", what, errs.Quote(name))
		}
	}
	if strings.HasPrefix(name, "__") {
		return errs.New(errs.InvalidArgument, "%s name %s may not start with \"__\" (reserved for internal use)", what, errs.Quote(name))
	}
	return nil
}

// MaxIDBytes bounds the ids a client makes up: producer ids, writer ids and
// the principals of grants. They are stored (in producer offsets, a log's
// frames, the grants file) and so are bounded as names are.
const MaxIDBytes = 256

// ValidateID checks an id a client made up: 1 to MaxIDBytes bytes without
// control characters. what names it in the error ("writer_id").
func ValidateID(what, id string) error {
	if id == "" || len(id) > MaxIDBytes {
		return errs.New(errs.InvalidArgument, "%s %s is %d bytes long; it must be 1 to %d", what, errs.Quote(id), len(id), MaxIDBytes)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return errs.New(errs.InvalidArgument, "%s %s has a control character", what, errs.Quote(id))
		}
	}
	return nil
}
