package lint

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The rules of docs/DESIGN.md's "Rules the tests enforce", over the arrows
// go list shows (tests not counted). Each names the arrows it forbids; a
// package the rules do not name is below the engine. Changing a rule is a
// change to the design, made here and there in the same commit: -update
// rewrites the arrows block, never these.

// rank orders the module's packages top down: an arrow may point to its own
// rank or one below, never up.
func rank(pkg string) int {
	switch {
	case pkg == "cmd/fluxgate" || pkg == "demo" || pkg == "conformance" || under(pkg, "bench"):
		return 5 // the binary and its tools
	case pkg == "server":
		return 4
	case pkg == "flight" || pkg == "icebergrest" || pkg == "client":
		return 3 // the front ends of the engine, and the client of them
	case pkg == "engine":
		return 2
	case under(pkg, "engine/internal"):
		return 1 // the engine's rooms
	}
	return 0 // below the engine: the stores, the rules of the data, the shared helpers
}

var rankNames = []string{"below the engine", "an engine room", "engine", "a front end (flight, icebergrest, client)",
	"server", "the binary and its tools (cmd, bench, demo, conformance)"}

// roomOrder lists the engine's rooms bottom up: a room imports only rooms
// listed before it, so no two rooms call each other and a read or a write
// goes down through them and comes back once.
var roomOrder = []string{"datadir", "inflight", "statevalues", "viewplan", "table", "tables", "laketier", "pkwrite",
	"logwrite", "tablelookup", "scanread", "scanplan"}

type rule struct {
	text string
	// breaks reports whether the arrow from → to breaks the rule.
	breaks func(from, to string) bool
}

var rules = []rule{
	{"an arrow never points up a rank (cmd, bench, demo, conformance > server > flight, icebergrest, client > " +
		"engine > its rooms > the rest)", func(from, to string) bool { return rank(to) > rank(from) }},
	{"only server, flight and cmd/fluxgate import engine", func(from, to string) bool {
		return to == "engine" && !slices.Contains([]string{"server", "flight", "cmd/fluxgate"}, from)
	}},
	{"only server imports flight", func(from, to string) bool { return to == "flight" && from != "server" }},
	{"only cmd/fluxgate, bench and demo import server", func(from, to string) bool {
		return to == "server" && !slices.Contains([]string{"cmd/fluxgate", "bench", "demo"}, from)
	}},
	{"client and conformance import nothing of the server: only client, protocol, errs, sqltype, internal/*",
		func(from, to string) bool {
			if from != "client" && from != "conformance" {
				return false
			}
			return !under(to, "internal") && !slices.Contains([]string{"client", "protocol", "errs", "sqltype"}, to)
		}},
	{"internal/* is the shared base: it imports only internal/* and errs", func(from, to string) bool {
		return under(from, "internal") && !under(to, "internal") && to != "errs"
	}},
	{"a room imports only rooms listed before it (" + strings.Join(roomOrder, ", ") + ")", func(from, to string) bool {
		r, ok1 := strings.CutPrefix(from, "engine/internal/")
		d, ok2 := strings.CutPrefix(to, "engine/internal/")
		if !ok1 || !ok2 {
			return false
		}
		ri, di := slices.Index(roomOrder, r), slices.Index(roomOrder, d)
		return ri < 0 || di < 0 || di >= ri
	}},
}

// under reports whether pkg is dir or below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestDesignRules checks the module's arrows against the rules.
func TestDesignRules(t *testing.T) {
	g, err := imports(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations(g) {
		t.Error(v)
	}
}

// TestDesignRulesCatch checks that each rule catches the arrow it forbids, so
// that TestDesignRules cannot pass by checking nothing.
func TestDesignRulesCatch(t *testing.T) {
	for _, tc := range []struct{ from, to, rule string }{
		{"bench/benchdata", "engine", "only server, flight"},
		{"internal/benchdata", "client", "up a rank"},
		{"lake", "engine", "up a rank"},
		{"engine/internal/viewplan", "engine", "up a rank"},
		{"icebergrest", "engine", "only server, flight"},
		{"bench", "flight", "only server imports flight"},
		{"conformance", "server", "only cmd/fluxgate, bench and demo"},
		{"client", "catalog", "client and conformance"},
		{"internal/prefetch", "row", "shared base"},
		{"engine/internal/laketier", "engine/internal/scanread", "a room imports"},
		{"engine/internal/table", "engine/internal/scanread", "a room imports"},
		{"engine/internal/newroom", "engine/internal/table", "a room imports"},
	} {
		got := violations(map[string][]string{tc.from: {tc.to}})
		if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.rule) }) {
			t.Errorf("%s → %s: want a break of %q, got %q", tc.from, tc.to, tc.rule, got)
		}
	}
	for from, tos := range map[string][]string{
		"engine/internal/logwrite": {"engine/internal/pkwrite", "engine/internal/table", "logstore"},
		"engine/internal/scanread": {"engine/internal/laketier", "engine/internal/tables"},
		"engine/internal/table":    {"engine/internal/inflight"},
		"flight":                   {"engine", "protocol"},
		"cmd/fluxgate":             {"server", "engine", "bench"},
	} {
		if got := violations(map[string][]string{from: tos}); len(got) > 0 {
			t.Errorf("%s → %v: want no break, got %q", from, tos, got)
		}
	}
}

// violations lists each arrow of g that breaks a rule, with the rule.
func violations(g map[string][]string) []string {
	var out []string
	for _, from := range sortedKeys(g) {
		for _, to := range g[from] {
			for _, r := range rules {
				if r.breaks(from, to) {
					out = append(out, fmt.Sprintf("%s (%s) → %s (%s) breaks a rule of docs/DESIGN.md: %s",
						from, rankNames[rank(from)], to, rankNames[rank(to)], r.text))
				}
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
