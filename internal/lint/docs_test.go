package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// archive is the history of the figures: it names files as they were.
const archive = "docs/benchmarks-archive.md"

// TestDocPaths checks that every file or directory of the repository that
// README.md and docs/ name exists: a path whose first part is a top-level
// entry of the repository (engine/read.go, docs/format/, python/tests/), and
// the target of every relative Markdown link.
func TestDocPaths(t *testing.T) {
	docs, err := markdownDocs()
	if err != nil {
		t.Fatal(err)
	}
	top, err := topLevel()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, doc := range docs {
		text, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range docPaths(string(text), top) {
			checked++
			if _, err := os.Stat(filepath.Join(root, p.path)); err != nil {
				if _, err := os.Stat(filepath.Join(root, filepath.Dir(doc), p.path)); err != nil {
					t.Errorf("%s:%d names %s, which does not exist", doc, p.line, p.path)
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked %d paths: the search for them is broken", checked)
	}
}

func TestDocPathsFound(t *testing.T) {
	top := map[string]bool{"engine": true, "docs": true}
	text := "see `engine/read.go` and engine/internal/table/ (docs/format/log-segment.md), " +
		"[the order](locking.md#rules), `<data>/catalog/`, https://x.org/engine/a.go, apache/iceberg `open-api/a.yaml`\n" +
		"[web](https://fluss.apache.org/docs/) [here](#lock-order)"
	var got []string
	for _, p := range docPaths(text, top) {
		got = append(got, p.path)
	}
	want := []string{"engine/read.go", "engine/internal/table/", "docs/format/log-segment.md", "locking.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paths %q, want %q", got, want)
	}
}

type docPath struct {
	path string
	line int
}

var (
	// A path: parts joined by slashes, not inside a URL or a placeholder.
	pathRE = regexp.MustCompile(`(?:^|[\s(\x60"'\[,;])((?:[\w.-]+/)+[\w.-]*)`)
	linkRE = regexp.MustCompile(`\]\(([^)\s#]+)(?:#[^)]*)?\)`)
)

// docPaths lists the repository paths text names: those that start with a
// top-level entry and end in a file name with an extension or in a slash
// (not the build's output: bin/, target/, python/.venv/), and the targets of relative links.
func docPaths(text string, top map[string]bool) []docPath {
	var out []docPath
	for i, line := range strings.Split(text, "\n") {
		for _, m := range pathRE.FindAllStringSubmatch(line, -1) {
			p := strings.TrimRight(m[1], ".")
			first, _, _ := strings.Cut(p, "/")
			// by the build, not checked in: the binary, Maven's output, make's venv
			built := first == "bin" || strings.Contains(p, "/target/") || p == "python/.venv" || strings.HasPrefix(p, "python/.venv/")
			if top[first] && !built && (strings.HasSuffix(p, "/") || strings.Contains(filepath.Base(p), ".")) {
				out = append(out, docPath{p, i + 1})
			}
		}
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			if !strings.Contains(m[1], "://") && !strings.HasPrefix(m[1], "mailto:") {
				out = append(out, docPath{m[1], i + 1})
			}
		}
	}
	return out
}

// markdownDocs lists README.md and the Markdown files under docs/, but the
// archive, relative to root.
func markdownDocs() ([]string, error) {
	docs := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if rel = filepath.ToSlash(rel); rel != archive {
			docs = append(docs, rel)
		}
		return err
	})
	return docs, err
}

// topLevel is the set of the repository's top-level entries, hidden ones not
// counted.
func topLevel() (map[string]bool, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	top := map[string]bool{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	return top, nil
}
