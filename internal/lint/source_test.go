package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSourceRules checks the rules of docs/DESIGN.md that go list cannot
// show, in every Go file of the module: only the binary's packages print or
// exit (fmt.Print*, log.Fatal*, log.Panic*), and every Arrow allocation of a
// test is checked (memory.DefaultAllocator and memory.NewGoAllocator only
// inside memory.NewCheckedAllocator).
func TestSourceRules(t *testing.T) {
	files, err := goFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d Go files under %s: the walk is broken", len(files), root)
	}
	for _, path := range files {
		src, err := parseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range sourceViolations(src) {
			t.Error(v)
		}
	}
}

// TestSourceRulesCatch checks that each source rule catches what it forbids.
func TestSourceRulesCatch(t *testing.T) {
	for _, tc := range []struct {
		path, src string
		want      int
	}{
		{"lake/x.go", `package lake; import "fmt"; func f() { fmt.Println(1) }`, 1},
		{"lake/x.go", `package lake; import l "log"; func f() { l.Fatalf("x") }`, 1},
		{"lake/x.go", `package lake; import "fmt"; func f() string { return fmt.Sprint(1) }`, 0},
		{"cmd/fluxgate/x.go", `package main; import "fmt"; func f() { fmt.Println(1) }`, 0},
		{"bench/peers/x/x.go", `package main; import "log"; func f() { log.Fatal(1) }`, 0},
		{"lake/x_test.go", `package lake; import "github.com/apache/arrow-go/v18/arrow/memory"
			var a = memory.DefaultAllocator
			var b = memory.NewCheckedAllocator(memory.DefaultAllocator)
			var c = memory.NewCheckedAllocator(memory.NewGoAllocator())
			var d = memory.NewGoAllocator()`, 2},
		{"lake/x.go", `package lake; import "github.com/apache/arrow-go/v18/arrow/memory"
			var a = memory.DefaultAllocator`, 0},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), tc.path, tc.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := sourceViolations(source{tc.path, token.NewFileSet(), f}); len(got) != tc.want {
			t.Errorf("%s %q: %d violations %q, want %d", tc.path, tc.src, len(got), got, tc.want)
		}
	}
}

type source struct {
	path string // relative to the module's root, with slashes
	fset *token.FileSet
	file *ast.File
}

func parseFile(path string) (source, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return source{}, err
	}
	rel, err := filepath.Rel(root, path)
	return source{filepath.ToSlash(rel), fset, f}, err
}

// sourceViolations lists where src breaks a source rule.
func sourceViolations(src source) []string {
	var out []string
	where := func(n ast.Node) string {
		p := src.fset.Position(n.Pos())
		return fmt.Sprintf("%s:%d", src.path, p.Line)
	}
	fmtName, logName, memName := importName(src.file, "fmt"), importName(src.file, "log"),
		importName(src.file, "github.com/apache/arrow-go/v18/arrow/memory")
	binary := src.file.Name.Name == "main" || strings.HasPrefix(src.path, "cmd/")
	test := strings.HasSuffix(src.path, "_test.go")
	var stack []ast.Node
	ast.Inspect(src.file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if pkg, name, ok := selector(n); ok {
			switch {
			case !binary && pkg == fmtName && strings.HasPrefix(name, "Print"),
				!binary && pkg == logName && (strings.HasPrefix(name, "Fatal") || strings.HasPrefix(name, "Panic")):
				out = append(out, fmt.Sprintf("%s: %s.%s outside the binary's packages: return an error, log with slog",
					where(n), pkg, name))
			case test && pkg == memName && (name == "DefaultAllocator" || name == "NewGoAllocator") &&
				!checkedArgument(stack):
				out = append(out, fmt.Sprintf("%s: memory.%s in a test: use a checked allocator "+
					"(memory.NewCheckedAllocator, released to size 0 at the test's end)", where(n), name))
			}
		}
		stack = append(stack, n)
		return true
	})
	return out
}

// checkedArgument reports whether the node above the stack is an argument of
// memory.NewCheckedAllocator (directly, or as the call NewGoAllocator()).
func checkedArgument(stack []ast.Node) bool {
	for i := len(stack) - 1; i >= 0 && i >= len(stack)-2; i-- {
		if call, ok := stack[i].(*ast.CallExpr); ok {
			if _, name, ok := selector(call.Fun); ok && name == "NewCheckedAllocator" {
				return true
			}
		}
	}
	return false
}

// selector returns pkg and name of a selector expression pkg.name.
func selector(n ast.Node) (pkg, name string, ok bool) {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", "", false
	}
	return id.Name, sel.Sel.Name, true
}

// importName is the name path is imported as in f, or "" when it is not.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// goFiles lists the module's Go files under root, not those of testdata,
// of other languages' trees or of hidden directories.
func goFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root {
			switch name := d.Name(); {
			case strings.HasPrefix(name, ".") || name == "testdata" || name == "python" || name == "java" ||
				name == "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}
