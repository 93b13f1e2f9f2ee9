package protocol

// LookupRequest is the {"lookup": ...} command (PROTOCOL.md §6): of
// DoExchange, and with Keys of GetFlightInfo (an inline lookup, §6.3).
type LookupRequest struct {
	Table string `json:"table"`
	// Columns are the columns to return after _key_index, in this order;
	// nil means every table column.
	Columns []string `json:"columns,omitempty"`
	// Prefix makes the lookup a prefix lookup: the keys are the bucket-key
	// columns (and a partitioned table's partition keys) and every row with
	// that prefix is returned (§6.2).
	Prefix bool `json:"prefix,omitempty"`
	// InsertIfNotExists inserts every absent key as (key, NULLs, new
	// auto-increment id) and returns it (§6.3).
	InsertIfNotExists bool `json:"insert_if_not_exists,omitempty"`
	// CreatePartitions false keeps insert_if_not_exists from creating a
	// missing partition (its keys then give no row).
	CreatePartitions *bool `json:"create_partitions,omitempty"`
	// Keys are the keys of an inline lookup, JSON objects of the key columns;
	// nil for a DoExchange lookup, whose keys come as batches.
	Keys []map[string]any `json:"keys,omitzero"`
}

// LookupMeta is the app_metadata of every message of one lookup answer. An
// answer larger than a message may be (4 MiB) comes in several, each with
// the answer's Keys and Rows, More on all but the last (PROTOCOL.md §6.1).
type LookupMeta struct {
	Keys int  `json:"keys"`           // keys in the request batch
	Rows int  `json:"rows"`           // rows in the whole answer
	More bool `json:"more,omitempty"` // more messages of this answer follow
}
