/// Where an async handler's code runs between its awaits.
public enum HandlerPlacement: Sendable {
  /// Swift's global task pool: the default, and the only place for handlers that compute
  /// (signature checks, large encodings), so the event loops keep serving other connections.
  case taskPool
  /// The event loop that owns the connection, as a task executor: for handlers that mostly
  /// wait (a database round trip) and compute little. A request then costs two thread
  /// switches (to what it awaits and back) instead of four, and the response is written
  /// without waking the loop.
  case eventLoop
}
