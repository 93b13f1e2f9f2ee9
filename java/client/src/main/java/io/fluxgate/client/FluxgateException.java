package io.fluxgate.client;

import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;

/**
 * An error of a fluxgate call: the server's gRPC status (PROTOCOL.md §1) with its message, which
 * names the table, column or field at fault. The subclasses are the kinds a caller acts on; other
 * codes come as this class itself, with {@link #code()} telling which.
 */
public class FluxgateException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;

  public FluxgateException(Status.Code code, String message) {
    this(code, message, null);
  }

  public FluxgateException(Status.Code code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /** The gRPC status code. */
  public Status.Code code() {
    return code;
  }

  /** Malformed request: bad JSON, unknown field, bad option, schema mismatch, type error. */
  public static final class InvalidArgument extends FluxgateException {
    private static final long serialVersionUID = 1L;

    InvalidArgument(String message, Throwable cause) {
      super(Status.Code.INVALID_ARGUMENT, message, cause);
    }
  }

  /** Table, database or column not found. */
  public static final class NotFound extends FluxgateException {
    private static final long serialVersionUID = 1L;

    NotFound(String message, Throwable cause) {
      super(Status.Code.NOT_FOUND, message, cause);
    }
  }

  /** A create of something that exists. */
  public static final class AlreadyExists extends FluxgateException {
    private static final long serialVersionUID = 1L;

    AlreadyExists(String message, Throwable cause) {
      super(Status.Code.ALREADY_EXISTS, message, cause);
    }
  }

  /** A well-formed request that the table's kind, options or state forbid. */
  public static final class FailedPrecondition extends FluxgateException {
    private static final long serialVersionUID = 1L;

    FailedPrecondition(String message, Throwable cause) {
      super(Status.Code.FAILED_PRECONDITION, message, cause);
    }
  }

  /** An offset outside what the table retains. */
  public static final class OutOfRange extends FluxgateException {
    private static final long serialVersionUID = 1L;

    OutOfRange(String message, Throwable cause) {
      super(Status.Code.OUT_OF_RANGE, message, cause);
    }
  }

  /** Missing or bad credentials, or an expired token. */
  public static final class Unauthenticated extends FluxgateException {
    private static final long serialVersionUID = 1L;

    Unauthenticated(String message, Throwable cause) {
      super(Status.Code.UNAUTHENTICATED, message, cause);
    }
  }

  /** Authenticated but not allowed. */
  public static final class PermissionDenied extends FluxgateException {
    private static final long serialVersionUID = 1L;

    PermissionDenied(String message, Throwable cause) {
      super(Status.Code.PERMISSION_DENIED, message, cause);
    }
  }

  /** Over a server limit: message size, streams per client, idle stream. */
  public static final class ResourceExhausted extends FluxgateException {
    private static final long serialVersionUID = 1L;

    ResourceExhausted(String message, Throwable cause) {
      super(Status.Code.RESOURCE_EXHAUSTED, message, cause);
    }
  }

  /** The server is unreachable, shutting down or failed transiently: safe to retry. */
  public static final class Unavailable extends FluxgateException {
    private static final long serialVersionUID = 1L;

    Unavailable(String message, Throwable cause) {
      super(Status.Code.UNAVAILABLE, message, cause);
    }
  }

  /**
   * The exception for a failed call, prefixed with what the client was doing; an UNAVAILABLE one
   * names the server, whose address is then what is most likely wrong. A FluxgateException passes
   * through as it is.
   */
  static FluxgateException from(String doing, Throwable t, String server) {
    if (t instanceof FluxgateException fe) {
      return fe;
    }
    Status status;
    if (t instanceof StatusRuntimeException sre) {
      status = sre.getStatus();
    } else if (t instanceof StatusException se) {
      status = se.getStatus();
    } else {
      status = Status.fromThrowable(t);
    }
    String detail = status.getDescription() != null ? status.getDescription() : String.valueOf(t);
    String message =
        status.getCode() == Status.Code.UNAVAILABLE
            ? doing + ": server " + server + " unavailable: " + detail
            : doing + ": " + detail;
    return switch (status.getCode()) {
      case INVALID_ARGUMENT -> new InvalidArgument(message, t);
      case NOT_FOUND -> new NotFound(message, t);
      case ALREADY_EXISTS -> new AlreadyExists(message, t);
      case FAILED_PRECONDITION -> new FailedPrecondition(message, t);
      case OUT_OF_RANGE -> new OutOfRange(message, t);
      case UNAUTHENTICATED -> new Unauthenticated(message, t);
      case PERMISSION_DENIED -> new PermissionDenied(message, t);
      case RESOURCE_EXHAUSTED -> new ResourceExhausted(message, t);
      case UNAVAILABLE -> new Unavailable(message, t);
      default -> new FluxgateException(status.getCode(), message, t);
    };
  }
}
