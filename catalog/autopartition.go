package catalog

import (
	"github.com/fluxgate-io/fluxgate/autopartition"
	"github.com/fluxgate-io/fluxgate/errs"
)

// parseAutoPartitionOption checks one table.auto-partition.* value on its
// own (package autopartition owns them).
func parseAutoPartitionOption(table, key, value string) (string, error) {
	v, ok, err := autopartition.ParseOption(key, value)
	switch {
	case !ok:
		return "", errs.New(errs.InvalidArgument, "table %s: unknown option %s (the %s* options are %s)", table, errs.Quote(key), autopartition.OptPrefix, autopartition.OptionList())
	case err != nil:
		return "", errs.New(errs.InvalidArgument, "table %s: option %s = %s: %v", table, errs.Quote(key), errs.Quote(value), err)
	}
	return v, nil
}

// autoPartition checks the table.auto-partition.* options against the
// partition keys and each other, at create and at alter; it may set
// num-precreate to 0, as Fluss does for more than one partition key.
func (n *normalizer) autoPartition(partitionKeys []string) error {
	isDate := func(col string) bool { t := n.types[col]; return t != nil && t.Root() == "DATE" }
	if err := autopartition.Validate(n.opts, partitionKeys, isDate); err != nil {
		return errs.New(errs.InvalidArgument, "table %s: %v", n.table, err)
	}
	return nil
}
