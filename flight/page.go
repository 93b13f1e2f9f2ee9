package flight

// Paged listings (PROTOCOL.md §3): list-databases, list-tables and
// list-grants answer one page at a time, so that no catalog state can make an
// answer exceed what a client accepts. A page holds at most max_results items
// (0: no count limit) and at most pageBytes of JSON; next_page_token, when
// set, asks for the page after it. Items are ordered by a key; the token is
// the last key returned, so a page is stable under concurrent creates and
// drops (it neither repeats nor skips an item that exists throughout).

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// pageBytes bounds the JSON of one page's items: half of gRPC's default 4
// MiB client limit. A single item (a table definition) is at most
// catalog.MaxDefinitionBytes, so a page always holds one.
const pageBytes = 2 << 20

// page is one page of a listing: the items as JSON, and the token of the
// next page ("" on the last).
type page struct {
	items []json.RawMessage
	next  string
}

// pageOf returns the page of items that req asks for, ordered by key.
func pageOf[T any](items []T, key func(T) string, req protocol.PageRequest, what string) (page, error) {
	if req.MaxResults < 0 {
		return page{}, errs.New(errs.Invalid, "%s: max_results %d is negative", what, req.MaxResults)
	}
	after, err := decodePageToken(req.PageToken, what)
	if err != nil {
		return page{}, err
	}
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	if req.PageToken != "" {
		i, _ := slices.BinarySearchFunc(items, after, func(it T, k string) int {
			if key(it) <= k {
				return -1
			}
			return 1
		})
		items = items[i:]
	}
	p := page{items: []json.RawMessage{}}
	size := 0
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return page{}, err
		}
		full := req.MaxResults > 0 && len(p.items) == req.MaxResults
		if full || (len(p.items) > 0 && size+len(b)+1 > pageBytes) {
			p.next = base64.RawURLEncoding.EncodeToString([]byte(key(items[i-1])))
			break
		}
		p.items = append(p.items, b)
		size += len(b) + 1
	}
	return p, nil
}

func decodePageToken(token, what string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", errs.New(errs.Invalid, "%s: page_token is not one this server returned", what)
	}
	return string(b), nil
}
