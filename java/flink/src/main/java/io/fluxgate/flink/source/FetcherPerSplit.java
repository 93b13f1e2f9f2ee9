package io.fluxgate.flink.source;

import java.util.List;
import java.util.function.Supplier;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.fetcher.SplitFetcher;
import org.apache.flink.connector.base.source.reader.fetcher.SplitFetcherManager;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;

/**
 * A fetcher (a thread) for each split. A bucket is read by a blocking DoGet, and an unbounded one
 * waits up to the server's idle interval for its next batch, so buckets sharing one thread would
 * wait on each other; each is read on its own, as Flink's file source reads with several fetchers.
 * A fetcher ends with its split.
 */
public final class FetcherPerSplit extends SplitFetcherManager<SplitFetch, BucketSplit> {
  FetcherPerSplit(Supplier<SplitReader<SplitFetch, BucketSplit>> readers, Configuration config) {
    super(readers, config);
  }

  @Override
  public void addSplits(List<BucketSplit> splits) {
    for (BucketSplit split : splits) {
      SplitFetcher<SplitFetch, BucketSplit> fetcher = createSplitFetcher();
      fetcher.addSplits(List.of(split));
      startFetcher(fetcher);
    }
  }

  @Override
  public void removeSplits(List<BucketSplit> splits) {
    throw new UnsupportedOperationException("fluxgate splits are not taken back from a reader");
  }
}
