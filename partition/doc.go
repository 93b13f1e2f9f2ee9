// Package partition holds the rules of partitioned tables that do not depend
// on storage: which column types may be partition keys, how a partition is
// named, and how a row's value becomes a partition value, all as Apache
// Fluss's PartitionUtils and ResolvedPartitionSpec do.
package partition
