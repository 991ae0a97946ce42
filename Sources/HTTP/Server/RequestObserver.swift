/// Told of every request answered by a handler or the router, once its response is queued:
/// the hook for request metrics. Called on an event-loop thread, so it must be cheap and must
/// never block.
public protocol RequestObserver: Sendable {
  func requestCompleted(method: HTTPMethod, status: Int, nanoseconds: UInt64)
}
