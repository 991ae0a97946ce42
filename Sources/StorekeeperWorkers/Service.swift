/// A long-running part of the server, in the manner of swift-service-lifecycle's `Service`:
/// `run()` works until its task is cancelled, then returns once the work in hand is done.
package protocol Service: Sendable {
  /// For the logs.
  var name: String { get }
  func run() async
}
