package io.fluxgate.flink.catalog;

import io.fluxgate.flink.AccumulatorSerializer;
import io.fluxgate.flink.Bitmaps;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.annotation.FunctionHint;
import org.apache.flink.table.functions.AggregateFunction;
import org.apache.flink.table.functions.ScalarFunction;
import org.roaringbitmap.RoaringBitmap;

/**
 * The roaring-bitmap functions the catalog registers in every database, with Fluss's names and
 * meanings: they build, combine and count the 32-bit bitmaps of rbm32 columns (BYTES), for exact
 * distinct counts from SQL. A NULL bitmap is NULL in, NULL out.
 */
public final class RbFunctions {
  private RbFunctions() {}

  /** Function name to class, as the catalog lists them. */
  static final Map<String, String> BY_NAME = new TreeMap<>();

  static {
    BY_NAME.put("rb_build", Build.class.getName());
    BY_NAME.put("rb_cardinality", Cardinality.class.getName());
    BY_NAME.put("rb_contains", Contains.class.getName());
    BY_NAME.put("rb_to_array", ToArray.class.getName());
    BY_NAME.put("rb_or", Or.class.getName());
    BY_NAME.put("rb_and", And.class.getName());
    BY_NAME.put("rb_xor", Xor.class.getName());
    BY_NAME.put("rb_andnot", AndNot.class.getName());
    BY_NAME.put("rb_build_agg", BuildAgg.class.getName());
    BY_NAME.put("rb_or_agg", OrAgg.class.getName());
    BY_NAME.put("rb_and_agg", AndAgg.class.getName());
    BY_NAME.put("rb_xor_agg", XorAgg.class.getName());
  }

  /** rb_build(ARRAY<INT>): the bitmap of the array's values; NULL elements are skipped. */
  public static final class Build extends ScalarFunction {
    public byte[] eval(Integer[] values) {
      if (values == null) {
        return null;
      }
      RoaringBitmap b = new RoaringBitmap();
      for (Integer v : values) {
        if (v != null) {
          b.add(v);
        }
      }
      return Bitmaps.toBytes(b);
    }
  }

  /** rb_cardinality(bitmap): how many values it holds. */
  public static final class Cardinality extends ScalarFunction {
    public Long eval(byte[] bitmap) {
      return bitmap == null ? null : Bitmaps.fromBytes(bitmap).getLongCardinality();
    }
  }

  /** rb_contains(bitmap, value). */
  public static final class Contains extends ScalarFunction {
    public Boolean eval(byte[] bitmap, Integer value) {
      return bitmap == null || value == null ? null : Bitmaps.fromBytes(bitmap).contains(value);
    }
  }

  /** rb_to_array(bitmap): its values, ascending (unsigned). */
  public static final class ToArray extends ScalarFunction {
    public Integer[] eval(byte[] bitmap) {
      if (bitmap == null) {
        return null;
      }
      return Bitmaps.fromBytes(bitmap).stream().boxed().toArray(Integer[]::new);
    }
  }

  /** A function of two bitmaps, NULL if either is. */
  public abstract static class Binary extends ScalarFunction {
    abstract void apply(RoaringBitmap left, RoaringBitmap right);

    public byte[] eval(byte[] left, byte[] right) {
      if (left == null || right == null) {
        return null;
      }
      RoaringBitmap l = Bitmaps.fromBytes(left);
      apply(l, Bitmaps.fromBytes(right));
      return Bitmaps.toBytes(l);
    }
  }

  /** rb_or(a, b): the union. */
  public static final class Or extends Binary {
    @Override
    void apply(RoaringBitmap left, RoaringBitmap right) {
      left.or(right);
    }
  }

  /** rb_and(a, b): the intersection. */
  public static final class And extends Binary {
    @Override
    void apply(RoaringBitmap left, RoaringBitmap right) {
      left.and(right);
    }
  }

  /** rb_xor(a, b): the values in exactly one. */
  public static final class Xor extends Binary {
    @Override
    void apply(RoaringBitmap left, RoaringBitmap right) {
      left.xor(right);
    }
  }

  /** rb_andnot(a, b): the values of a not in b. */
  public static final class AndNot extends Binary {
    @Override
    void apply(RoaringBitmap left, RoaringBitmap right) {
      left.andNot(right);
    }
  }

  /**
   * An aggregate whose accumulator is a bitmap, or null before the first input (which rb_and_agg
   * needs: the intersection of nothing is not the empty set). Inserts only: unions and
   * intersections cannot be taken back.
   */
  @FunctionHint(
      accumulator =
          @DataTypeHint(
              value = "RAW",
              bridgedTo = Accumulator.class,
              rawSerializer = AccumulatorSerializer.class))
  public abstract static class Agg<T> extends AggregateFunction<byte[], Accumulator> {
    @Override
    public Accumulator createAccumulator() {
      return new Accumulator();
    }

    /** Folds one input into the accumulator's bitmap, which is never null here. */
    abstract void add(RoaringBitmap acc, T input);

    /** Combines two accumulated bitmaps. */
    abstract void combine(RoaringBitmap acc, RoaringBitmap other);

    void accumulateValue(Accumulator acc, T input) {
      if (input == null) {
        return;
      }
      if (acc.bitmap == null) {
        acc.bitmap = new RoaringBitmap();
        start(acc.bitmap, input);
      } else {
        add(acc.bitmap, input);
      }
    }

    /** The first input: by default what add does to an empty bitmap. */
    void start(RoaringBitmap empty, T input) {
      add(empty, input);
    }

    public void merge(Accumulator acc, Iterable<Accumulator> others) {
      for (Accumulator o : others) {
        if (o.bitmap == null) {
          continue;
        }
        if (acc.bitmap == null) {
          acc.bitmap = o.bitmap.clone();
        } else {
          combine(acc.bitmap, o.bitmap);
        }
      }
    }

    public void resetAccumulator(Accumulator acc) {
      acc.bitmap = null;
    }

    @Override
    public byte[] getValue(Accumulator acc) {
      return acc.bitmap == null ? null : Bitmaps.toBytes(acc.bitmap.clone());
    }
  }

  /** rb_build_agg(INT): the bitmap of every value of the group. */
  public static final class BuildAgg extends Agg<Integer> {
    public void accumulate(Accumulator acc, Integer value) {
      accumulateValue(acc, value);
    }

    @Override
    void add(RoaringBitmap acc, Integer value) {
      acc.add(value);
    }

    @Override
    void combine(RoaringBitmap acc, RoaringBitmap other) {
      acc.or(other);
    }
  }

  /** rb_or_agg(bitmap): the union of the group's bitmaps. */
  public static final class OrAgg extends Agg<byte[]> {
    public void accumulate(Accumulator acc, byte[] bitmap) {
      accumulateValue(acc, bitmap);
    }

    @Override
    void add(RoaringBitmap acc, byte[] bitmap) {
      acc.or(Bitmaps.fromBytes(bitmap));
    }

    @Override
    void combine(RoaringBitmap acc, RoaringBitmap other) {
      acc.or(other);
    }
  }

  /** rb_and_agg(bitmap): the intersection of the group's bitmaps. */
  public static final class AndAgg extends Agg<byte[]> {
    public void accumulate(Accumulator acc, byte[] bitmap) {
      accumulateValue(acc, bitmap);
    }

    @Override
    void start(RoaringBitmap empty, byte[] bitmap) {
      empty.or(Bitmaps.fromBytes(bitmap));
    }

    @Override
    void add(RoaringBitmap acc, byte[] bitmap) {
      acc.and(Bitmaps.fromBytes(bitmap));
    }

    @Override
    void combine(RoaringBitmap acc, RoaringBitmap other) {
      acc.and(other);
    }
  }

  /** rb_xor_agg(bitmap): the values in an odd number of the group's bitmaps. */
  public static final class XorAgg extends Agg<byte[]> {
    public void accumulate(Accumulator acc, byte[] bitmap) {
      accumulateValue(acc, bitmap);
    }

    @Override
    void add(RoaringBitmap acc, byte[] bitmap) {
      acc.xor(Bitmaps.fromBytes(bitmap));
    }

    @Override
    void combine(RoaringBitmap acc, RoaringBitmap other) {
      acc.xor(other);
    }
  }

  /** An aggregate's bitmap so far; null before its first input. */
  public static final class Accumulator {
    public RoaringBitmap bitmap;
  }
}
