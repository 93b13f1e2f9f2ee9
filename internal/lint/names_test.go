package lint

import (
	"go/ast"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// namedDocs are the pages whose backquoted Go names must be the code's.
var namedDocs = []string{"docs/locking.md"}

// TestDocNames checks that every Go name the pages of namedDocs give in
// backquotes is declared in the module: pkg.Name, pkg.Type.Member (a field
// or a method, pkg.Type.mu.field for a field of an inline struct), with an
// index like [b] allowed after it, and a bare name as any declaration's.
func TestDocNames(t *testing.T) {
	decls, err := declarations()
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range namedDocs {
		text, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		names := docNames(string(text))
		if len(names) < 20 {
			t.Errorf("%s: found %d names: the search for them is broken", doc, len(names))
		}
		for _, n := range names {
			if !decls.has(n.name) {
				t.Errorf("%s:%d names `%s`, which the code does not declare", doc, n.line, n.name)
			}
		}
	}
}

func TestDocNamesFound(t *testing.T) {
	d := decls{pkgs: map[string]bool{"table": true}, names: map[string]bool{"table.PK": true, "table.PK.locks": true,
		"table.PK.Lock": true, "Quiesce": true}}
	for name, want := range map[string]bool{"table.PK.locks": true, "table.PK.Lock": true, "table.PK.gone": false,
		"table": true, "Quiesce": true, "quiesce": false, "nopkg.X": false, "table.Tier": false} {
		if got := d.has(name); got != want {
			t.Errorf("has(%q) = %v, want %v", name, got, want)
		}
	}
	text := "`table.PK.locks[b]` and `inflight.Queue.mu`, `acl.json`, `--segment-bytes`, `mu struct{...}`, `Quiesce`"
	var got []string
	for _, n := range docNames(text) {
		got = append(got, n.name)
	}
	if want := []string{"table.PK.locks", "inflight.Queue.mu", "Quiesce"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

type docName struct {
	name string
	line int
}

var (
	codeSpanRE = regexp.MustCompile("`([^`]+)`")
	goNameRE   = regexp.MustCompile(`^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\[\w+\])?$`)
	// fileExtRE is a file's name (acl.json, locksordering.txt), not Go's.
	fileExtRE = regexp.MustCompile(`\.(json|txt|go|md|log|lock|yaml|toml)$`)
)

// docNames lists the Go names in the backquotes of text.
func docNames(text string) []docName {
	var out []docName
	for i, line := range strings.Split(text, "\n") {
		for _, m := range codeSpanRE.FindAllStringSubmatch(line, -1) {
			if g := goNameRE.FindStringSubmatch(m[1]); g != nil && !fileExtRE.MatchString(g[1]) {
				out = append(out, docName{g[1], i + 1})
			}
		}
	}
	return out
}

// decls are the module's package names and declared names: "pkg.Name",
// "pkg.Type.Member", "pkg.Type.field.field", and each name alone.
type decls struct {
	pkgs  map[string]bool
	names map[string]bool
}

func (d decls) has(name string) bool {
	if !strings.Contains(name, ".") {
		return d.pkgs[name] || d.names[name]
	}
	return d.names[name]
}

// declarations parses the module's non-test Go files.
func declarations() (decls, error) {
	d := decls{pkgs: map[string]bool{}, names: map[string]bool{}}
	files, err := goFiles(root)
	if err != nil {
		return d, err
	}
	add := func(qualified string) {
		d.names[qualified] = true
		d.names[qualified[strings.LastIndex(qualified, ".")+1:]] = true
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := parseFile(path)
		if err != nil {
			return d, err
		}
		pkg := src.file.Name.Name
		d.pkgs[pkg] = true
		for _, decl := range src.file.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					add(pkg + "." + decl.Name.Name)
				} else if recv := receiverType(decl.Recv.List[0].Type); recv != "" {
					add(pkg + "." + recv + "." + decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						add(pkg + "." + spec.Name.Name)
						addFields(add, pkg+"."+spec.Name.Name, spec.Type)
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							add(pkg + "." + n.Name)
						}
					}
				}
			}
		}
	}
	return d, nil
}

// addFields adds the fields of a struct type, and those of its inline
// structs, under prefix.
func addFields(add func(string), prefix string, typ ast.Expr) {
	st, ok := typ.(*ast.StructType)
	if !ok {
		return
	}
	for _, f := range st.Fields.List {
		names := f.Names
		if len(names) == 0 { // embedded: named by its type
			if n := receiverType(f.Type); n != "" {
				names = []*ast.Ident{ast.NewIdent(n)}
			}
		}
		for _, n := range names {
			add(prefix + "." + n.Name)
			addFields(add, prefix+"."+n.Name, f.Type)
		}
	}
}

// receiverType is the name of a method's receiver type (T, *T, T[P]), or of
// an embedded field's type (sync.Mutex is Mutex).
func receiverType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverType(e.X)
	case *ast.IndexExpr:
		return receiverType(e.X)
	case *ast.IndexListExpr:
		return receiverType(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}
