package table

import (
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/merge"
)

// Schema is a table definition and what is made from it to read and
// write under its schema. alter-table replaces it whole; an operation loads
// it once and uses that one throughout, so that a schema change in between
// never mixes two schemas.
type Schema struct {
	Info     *catalog.TableInfo
	Types    []arrow.DataType // of the table's columns
	Decoder  *logstore.Decoder
	encoders chan *logstore.Encoder // a small pool: encoders keep their buffers
	Merger   *merge.Merger          // primary-key tables only
}

// NewSchema makes what reads and writes info's rows; alloc is the decoder's.
func NewSchema(info *catalog.TableInfo, alloc memory.Allocator) (*Schema, error) {
	s := &Schema{
		Info:     info,
		Decoder:  logstore.NewDecoder(info.ArrowSchema(), alloc),
		encoders: make(chan *logstore.Encoder, runtime.GOMAXPROCS(0)),
	}
	for _, f := range info.ArrowSchema().Fields() {
		s.Types = append(s.Types, f.Type)
	}
	if info.IsPrimaryKey() {
		var err error
		if s.Merger, err = merge.New(info); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// GetEncoder returns an encoder of the schema's rows from the pool, or a
// new one.
func (s *Schema) GetEncoder(codec logstore.Codec, mem memory.Allocator) (*logstore.Encoder, error) {
	select {
	case enc := <-s.encoders:
		return enc, nil
	default:
		return logstore.NewEncoder(s.Info.ArrowSchema(), codec, s.Info.ZstdLevel(), mem)
	}
}

// PutEncoder gives enc back to the pool, or drops it when the pool is full.
func (s *Schema) PutEncoder(enc *logstore.Encoder) {
	select {
	case s.encoders <- enc:
	default:
	}
}
