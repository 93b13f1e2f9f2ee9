package io.fluxgate.spark;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.scheduler.TaskInfo;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.QueryPlanningTracker;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.util.QueryExecutionListener;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Where a Spark query's time goes, from Spark's own records: the planning phases of each query
 * (analysis, optimization, physical planning), each job and stage, and each task's launch, finish,
 * deserialization, run and CPU time. Times are the driver's wall clock in milliseconds, which
 * Spark's events carry; {@link #mark} adds the caller's own.
 */
final class QueryTimeline extends SparkListener implements QueryExecutionListener {
  private final SparkSession spark;
  private final List<Event> events = new ArrayList<>();

  private record Event(long ms, String what) {}

  QueryTimeline(SparkSession spark) {
    this.spark = spark;
    spark.sparkContext().addSparkListener(this);
    spark.listenerManager().register(this);
  }

  /** Forgets what was recorded, to record the next query. */
  synchronized void clear() {
    events.clear();
  }

  synchronized void mark(long ms, String what) {
    events.add(new Event(ms, what));
  }

  /**
   * The events since the last {@link #clear}, one a line, in milliseconds from start, once Spark's
   * listener bus has delivered them.
   */
  List<String> lines(long start) throws TimeoutException {
    spark.sparkContext().listenerBus().waitUntilEmpty();
    List<Event> sorted;
    synchronized (this) {
      sorted = new ArrayList<>(events);
    }
    sorted.sort(Comparator.comparingLong(Event::ms));
    List<String> out = new ArrayList<>();
    for (Event e : sorted) {
      out.add(String.format("%6d ms  %s", e.ms() - start, e.what()));
    }
    return out;
  }

  @Override
  public void onSuccess(String funcName, QueryExecution qe, long durationNs) {
    Map<String, QueryPlanningTracker.PhaseSummary> phases =
        CollectionConverters.asJava(qe.tracker().phases());
    phases.forEach(
        (phase, p) -> {
          mark(p.startTimeMs(), funcName + ": " + phase + " starts");
          mark(p.endTimeMs(), funcName + ": " + phase + " ends (" + p.durationMs() + " ms)");
        });
  }

  @Override
  public void onFailure(String funcName, QueryExecution qe, Exception exception) {}

  @Override
  public void onJobStart(SparkListenerJobStart e) {
    mark(e.time(), "job " + e.jobId() + " starts, " + e.stageIds().size() + " stages");
  }

  @Override
  public void onJobEnd(SparkListenerJobEnd e) {
    mark(e.time(), "job " + e.jobId() + " ends");
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted e) {
    StageInfo s = e.stageInfo();
    mark(
        (Long) s.submissionTime().get(),
        "stage " + s.stageId() + " submitted, " + s.numTasks() + " tasks: " + s.name());
    mark((Long) s.completionTime().get(), "stage " + s.stageId() + " completed");
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd e) {
    TaskInfo t = e.taskInfo();
    TaskMetrics m = e.taskMetrics();
    String task = "stage " + e.stageId() + " task " + t.index();
    mark(t.launchTime(), task + " launched");
    mark(
        t.finishTime(),
        String.format(
            "%s finished: deserialize %d ms, run %d ms (CPU %d ms), GC %d ms",
            task,
            m.executorDeserializeTime(),
            m.executorRunTime(),
            m.executorCpuTime() / 1_000_000,
            m.jvmGCTime()));
  }
}
