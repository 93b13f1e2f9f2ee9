package io.fluxgate.flink.source;

import java.util.List;
import java.util.Set;

/**
 * The enumerator's checkpoint.
 *
 * @param pending splits planned or returned, not assigned yet
 * @param partitions the ids of the partitions whose splits were made (a partition dropped and
 *     created again has a new id, and is read again)
 * @param nextSplit the number the next split made takes: split i belongs to reader i % parallelism
 */
public record EnumeratorState(List<BucketSplit> pending, Set<Long> partitions, int nextSplit) {}
