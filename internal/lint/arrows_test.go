package lint

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/DESIGN.md's arrows block from the code")

const module = "github.com/fluxgate-io/fluxgate/"

// The block is the fenced code block whose info string is "arrows".
const (
	blockStart = "```arrows\n"
	blockEnd   = "```\n"
)

// TestDesignArrows checks that every package of the module, and each of its
// imports of the module's packages, is in DESIGN.md's arrows block, and
// nothing else: a new package or a new arrow is a change to the design, made
// in both places.
func TestDesignArrows(t *testing.T) {
	g, err := imports(root)
	if err != nil {
		t.Fatal(err)
	}
	got := arrows(g)
	path := filepath.Join(root, "docs", "DESIGN.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(doc, []byte(blockStart))
	if start < 0 {
		t.Fatalf("%s has no %q block", path, strings.TrimSpace(blockStart))
	}
	start += len(blockStart)
	end := bytes.Index(doc[start:], []byte(blockEnd))
	if end < 0 {
		t.Fatalf("%s: the arrows block does not end", path)
	}
	want := string(doc[start : start+end])
	if *update {
		out := append(append(append([]byte{}, doc[:start]...), got...), doc[start+end:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("docs/DESIGN.md's arrows are not the code's (go test ./internal/lint -update rewrites them; then "+
			"say why in the design's prose):\n%s", lineDiff(want, got))
	}
}

// root is the module's directory.
var root = filepath.Join("..", "..")

// imports maps each package of the module under root to the module's
// packages it imports (not counting tests), both without the module's prefix.
// go list runs once for the tests that read the graph.
func imports(root string) (map[string][]string, error) {
	graph.once.Do(func() { graph.g, graph.err = listImports(root) })
	return graph.g, graph.err
}

var graph struct {
	once sync.Once
	g    map[string][]string
	err  error
}

func listImports(root string) (map[string][]string, error) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	g := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if pkg == "internal/lint" {
			continue
		}
		g[pkg] = []string{}
		for _, imp := range fields[1:] {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				g[pkg] = append(g[pkg], dep)
			}
		}
	}
	return g, nil
}

// arrows lists each package of g with the packages it imports, one package a
// line: "engine → catalog, kv, ...".
func arrows(g map[string][]string) string {
	var b strings.Builder
	for _, pkg := range sortedKeys(g) {
		if len(g[pkg]) == 0 {
			fmt.Fprintf(&b, "%s\n", pkg)
			continue
		}
		fmt.Fprintf(&b, "%s → %s\n", pkg, strings.Join(g[pkg], ", "))
	}
	return b.String()
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for l := range strings.Lines(s) {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for l := range strings.Lines(want) {
		if !g[l] {
			b.WriteString("- " + l)
		}
	}
	for l := range strings.Lines(got) {
		if !w[l] {
			b.WriteString("+ " + l)
		}
	}
	return b.String()
}
