package flight

// Paged listings (PROTOCOL.md §3): list-databases, list-tables and
// list-grants answer one page at a time, so that no catalog state can make an
// answer exceed what a client accepts. A page holds at most max_results items
// (0: no count limit) and at most pageBytes of JSON; next_page_token, when
// set, asks for the page after it. Items are ordered by a key; the token is
// the last key returned, so a page is stable under concurrent creates and
// drops (it neither repeats nor skips an item that exists throughout). The
// token carries a checksum of the key and the listing, so that one this
// server did not make for that listing is refused rather than read as a
// place to start.

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
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
		return page{}, errs.New(errs.InvalidArgument, "%s: max_results %d is negative", what, req.MaxResults)
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
			p.next = encodePageToken(key(items[i-1]), what)
			break
		}
		p.items = append(p.items, b)
		size += len(b) + 1
	}
	return p, nil
}

// A page token is base64url (no padding) of a version byte, the CRC-32C of
// the listing's name and the key, and the key.
const pageTokenVersion = 1

var pageTokenCRC = crc32.MakeTable(crc32.Castagnoli)

func pageTokenSum(key, what string) uint32 {
	return crc32.Update(crc32.Checksum([]byte(what+"\x00"), pageTokenCRC), pageTokenCRC, []byte(key))
}

func encodePageToken(key, what string) string {
	b := make([]byte, 5, 5+len(key))
	b[0] = pageTokenVersion
	binary.BigEndian.PutUint32(b[1:], pageTokenSum(key, what))
	return base64.RawURLEncoding.EncodeToString(append(b, key...))
}

// decodePageToken returns the key a page token of the listing what
// continues after; "" is the first page.
func decodePageToken(token, what string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(b) < 5 || b[0] != pageTokenVersion || binary.BigEndian.Uint32(b[1:5]) != pageTokenSum(string(b[5:]), what) {
		return "", errs.New(errs.InvalidArgument, "%s: page_token %s is not one this server returned for this listing", what, errs.Quote(token))
	}
	return string(b[5:]), nil
}
