package io.fluxgate.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.CheckOverflowInTableInsert;
import org.apache.spark.sql.catalyst.expressions.EvalMode;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.BoxedUnit;

/**
 * Spark's store assignment, policy ANSI (its default), of a DataFrame's columns to a table's types.
 * Spark's analyzer adds these casts for a table of a fixed schema; a fluxgate table accepts any
 * schema (a subset of the columns is a partial update), so the writer adds them: an INT into a
 * BIGINT column, a DECIMAL literal into a DOUBLE one, a value into a STRING one. What ANSI does not
 * assign (a STRING into a number, a TIMESTAMP into a DATE) is refused when the write is planned; a
 * value that does not fit its column (300 into a TINYINT) fails the task, naming the column.
 */
final class StoreAssignment {
  private StoreAssignment() {}

  /** Whether a value of type from is stored into a column of type to, cast if need be. */
  static boolean allowed(DataType from, DataType to) {
    return DataType.equalsIgnoreNullability(from, to) || Cast.canANSIStoreAssign(from, to);
  }

  /** Whether rows of the schema from need casts to be rows of the schema to. */
  static boolean needsCast(StructType from, StructType to) {
    for (int i = 0; i < from.fields().length; i++) {
      if (!DataType.equalsIgnoreNullability(
          from.fields()[i].dataType(), to.fields()[i].dataType())) {
        return true;
      }
    }
    return false;
  }

  /**
   * The rows of the schema from as rows of the schema to (column by column, both of one length),
   * cast as Spark's table insertion casts them under ANSI; timeZone is the session's, for casts
   * between timestamps, dates and strings.
   */
  static UnsafeProjection projection(StructType from, StructType to, String timeZone) {
    List<Expression> columns = new ArrayList<>();
    for (int i = 0; i < from.fields().length; i++) {
      DataType have = from.fields()[i].dataType();
      DataType want = to.fields()[i].dataType();
      Expression column = new BoundReference(i, have, true);
      if (!DataType.equalsIgnoreNullability(have, want)) {
        Cast cast = new Cast(column, want, Option.apply(timeZone), EvalMode.ANSI());
        cast.setTagValue(Cast.BY_TABLE_INSERTION(), BoxedUnit.UNIT);
        // An overflow names the column instead of suggesting to turn ANSI mode off.
        column = new CheckOverflowInTableInsert(cast, to.fields()[i].name());
      }
      columns.add(column);
    }
    return UnsafeProjection.create(CollectionConverters.asScala(columns).toList());
  }
}
