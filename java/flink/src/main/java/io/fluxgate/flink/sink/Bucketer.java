package io.fluxgate.flink.sink;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.apache.flink.api.common.functions.Partitioner;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;

/**
 * The server's bucket of a row (the Go bucketing package, PROTOCOL.md §2): Iceberg's bucket[n] —
 * the 32-bit murmur3 of the key columns' single-value serializations, back to back, a NULL adding
 * nothing — so that a bucket shuffle sends each bucket's rows through one subtask.
 */
public final class Bucketer implements KeySelector<RowData, Integer> {
  private final int[] keys;
  private final LogicalType[] types;
  private final int numBuckets;
  private transient ByteBuffer buf;

  Bucketer(RowType rowType, List<String> bucketKey, int numBuckets) {
    this.numBuckets = numBuckets;
    this.keys = new int[bucketKey.size()];
    this.types = new LogicalType[keys.length];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = rowType.getFieldIndex(bucketKey.get(i));
      if (keys[i] < 0) {
        throw new ValidationException("bucket key column " + bucketKey.get(i) + " is not written");
      }
      types[i] = rowType.getTypeAt(keys[i]);
    }
  }

  int numBuckets() {
    return numBuckets;
  }

  @Override
  public Integer getKey(RowData row) {
    return bucket(row);
  }

  /** Sends bucket b to subtask b % parallelism: the subtask that owns it (UndoRecovery). */
  static final class ToOwner implements Partitioner<Integer> {
    @Override
    public int partition(Integer bucket, int subtasks) {
      return bucket % subtasks;
    }
  }

  int bucket(RowData row) {
    return (hash(row) & Integer.MAX_VALUE) % numBuckets;
  }

  /** The murmur3 of the row's key, as Iceberg's bucket transform hashes it. */
  int hash(RowData row) {
    if (buf == null) {
      buf = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
    }
    buf.clear();
    for (int i = 0; i < keys.length; i++) {
      if (!row.isNullAt(keys[i])) {
        append(row, keys[i], types[i]);
      }
    }
    return murmur3(buf.array(), buf.position());
  }

  private void append(RowData row, int pos, LogicalType type) {
    switch (type.getTypeRoot()) {
      case TINYINT -> putLong(row.getByte(pos));
      case SMALLINT -> putLong(row.getShort(pos));
      case INTEGER, DATE -> putLong(row.getInt(pos));
      case BIGINT -> putLong(row.getLong(pos));
      case TIME_WITHOUT_TIME_ZONE -> putLong(row.getInt(pos) * 1000L); // millis of the day
      case TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE -> {
        TimestampData ts = row.getTimestamp(pos, LogicalTypeChecks.getPrecision(type));
        putLong(ts.getMillisecond() * 1000L + ts.getNanoOfMillisecond() / 1000);
      }
      case BOOLEAN -> putLong(row.getBoolean(pos) ? 1 : 0);
      case FLOAT -> putDouble(row.getFloat(pos));
      case DOUBLE -> putDouble(row.getDouble(pos));
      case DECIMAL -> {
        DecimalType d = (DecimalType) type;
        // The unscaled value's shortest two's-complement bytes, as BigInteger.toByteArray.
        put(
            row.getDecimal(pos, d.getPrecision(), d.getScale())
                .toBigDecimal()
                .unscaledValue()
                .toByteArray());
      }
      case CHAR, VARCHAR -> put(row.getString(pos).toBytes());
      case BINARY, VARBINARY -> put(row.getBinary(pos));
      default -> throw new ValidationException("a " + type + " column cannot be a bucket key");
    }
  }

  private void putLong(long v) {
    ensure(8);
    buf.putLong(v);
  }

  /** As Iceberg: the double's bits, with -0.0 as 0.0 and one NaN. */
  private void putDouble(double v) {
    putLong(v == 0 ? 0 : Double.doubleToLongBits(v));
  }

  private void put(byte[] b) {
    ensure(b.length);
    buf.put(b);
  }

  private void ensure(int n) {
    if (buf.remaining() < n) {
      ByteBuffer bigger =
          ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + n))
              .order(ByteOrder.LITTLE_ENDIAN);
      bigger.put(buf.array(), 0, buf.position());
      buf = bigger;
    }
  }

  /** The 32-bit x86 MurmurHash3 of b[0, n) with seed 0. */
  static int murmur3(byte[] b, int n) {
    final int c1 = 0xcc9e2d51;
    final int c2 = 0x1b873593;
    int h = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      int k = (b[i] & 0xff) | (b[i + 1] & 0xff) << 8 | (b[i + 2] & 0xff) << 16 | b[i + 3] << 24;
      h ^= Integer.rotateLeft(k * c1, 15) * c2;
      h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
    }
    int k = 0;
    switch (n - i) {
      case 3:
        k ^= (b[i + 2] & 0xff) << 16;
      // fall through
      case 2:
        k ^= (b[i + 1] & 0xff) << 8;
      // fall through
      case 1:
        k ^= b[i] & 0xff;
        h ^= Integer.rotateLeft(k * c1, 15) * c2;
      // fall through
      default:
    }
    h ^= n;
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h;
  }
}
