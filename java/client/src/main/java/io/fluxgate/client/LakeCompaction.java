package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonUnwrapped;

/**
 * The result of compact-lake: the lake snapshot after it, and what it did.
 *
 * @param orphansDeleted files no snapshot names any more, deleted
 */
public record LakeCompaction(
    @JsonUnwrapped LakeSnapshot snapshot,
    int rewrittenFiles,
    int addedFiles,
    int removedDeleteFiles,
    int orphansDeleted) {}
