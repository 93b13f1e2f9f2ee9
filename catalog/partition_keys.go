package catalog

import (
	"slices"
	"strings"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/partition"
)

// partitionKeys validates a table's partition keys with Fluss's rules and
// messages (TableDescriptor, TableDescriptorValidation.checkPartition): each
// a column of a supported type, listed once; on a primary-key table a subset
// of the primary key that leaves some of it.
func (n *normalizer) partitionKeys(keys []string) error {
	for _, k := range keys {
		t := n.types[k]
		switch {
		case t == nil && len(n.pk) == 0:
			return errs.New(errs.InvalidArgument, "table %s: Partition key '%s' does not exist in the schema.", n.table, k)
		case len(n.pk) > 0 && !slices.Contains(n.pk, k):
			return errs.New(errs.InvalidArgument, "table %s: Partitioned Primary Key Table requires partition key %s is a subset of the primary key %s.",
				n.table, javaList(keys), javaList(n.pk))
		case slices.Contains(n.partKeys, k):
			return errs.New(errs.InvalidArgument, "table %s: partition key %s is listed twice", n.table, errs.Quote(k))
		case !partition.Supported(t.Root()):
			return errs.New(errs.InvalidArgument, "table %s: Currently, partitioned table supported partition key type are %s, but got partition key '%s' with data type %s.",
				n.table, partition.SupportedTypes, k, t.String())
		}
		n.partKeys = append(n.partKeys, k)
	}
	if len(n.pk) > 0 && len(n.partKeys) > 0 && len(n.physicalKey()) == 0 {
		return errs.New(errs.InvalidArgument, "table %s: Primary Key constraint %s should not be same with partition fields %s.",
			n.table, javaList(n.pk), javaList(n.partKeys))
	}
	return nil
}

// physicalKey is the primary key without the partition keys.
func (n *normalizer) physicalKey() []string {
	var out []string
	for _, k := range n.pk {
		if !slices.Contains(n.partKeys, k) {
			out = append(out, k)
		}
	}
	return out
}

// javaList prints names as Java prints a List, which Fluss's messages show.
func javaList(names []string) string { return "[" + strings.Join(names, ", ") + "]" }
