package catalog

import (
	"strconv"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
)

// DefaultDatabase is the database of a table name without a database part; it
// is created when a catalog is first opened.
const DefaultDatabase = "fluss"

// The views a table name may select with a `$` suffix.
const (
	ViewChangelog = "changelog"
	ViewLake      = "lake"
)

// TablePath names a table, and optionally one of its views.
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
			return p, errs.New(errs.Invalid, "table name %s: unknown view %s: expected $changelog or $lake", quote(s), quote("$"+view))
		}
		p.View = view
	}
	db, table, qualified := strings.Cut(name, ".")
	if !qualified {
		db, table = DefaultDatabase, name
	}
	if err := validateName("database", db); err != nil {
		return TablePath{}, errs.New(errs.Invalid, "table name %s: %w", quote(s), err)
	}
	if err := validateName("table", table); err != nil {
		return TablePath{}, errs.New(errs.Invalid, "table name %s: %w", quote(s), err)
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

const maxNameLen = 200

func validateName(what, name string) error {
	if name == "" || len(name) > maxNameLen {
		return errs.New(errs.Invalid, "%s name %s is %d bytes long; it must be 1 to %d", what, quote(name), len(name), maxNameLen)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return errs.New(errs.Invalid, "%s name %q may contain only letters, digits, '_' and '-'", what, name)
		}
	}
	if strings.HasPrefix(name, "__") {
		return errs.New(errs.Invalid, "%s name %q may not start with \"__\" (reserved for internal use)", what, name)
	}
	return nil
}

// quoteMax is how much of a client's string an error message quotes.
const quoteMax = 64

// quote quotes s for an error message, cut to its first quoteMax bytes: an
// error echoes what the client sent, and must stay small whatever that was.
func quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:quoteMax]) + "..."
}
