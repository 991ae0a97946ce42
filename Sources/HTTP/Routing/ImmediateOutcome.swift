/// What a deferrable handler decides on the event loop: the answer now, or the rest of the
/// work as an async handler, for the requests that must wait (a token to verify, a database
/// read). The common case then costs what an immediate handler costs: no task, no hop.
public enum ImmediateOutcome: Sendable {
  case response(Response)
  /// Run as the route's async handler would be, placed as the route says.
  case later(Handler)
}
