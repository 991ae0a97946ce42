/// Told of every request answered by a handler or the router, once its response is queued:
/// the hook for request metrics. Called on an event-loop thread, so it must be cheap and must
/// never block.
///
/// Class-bound: the loops call it on every response, and an existential of any type was
/// copied (boxed, retained and released) per call.
public protocol RequestObserver: AnyObject, Sendable {
  func requestCompleted(method: HTTPMethod, status: Int, nanoseconds: UInt64)
}
