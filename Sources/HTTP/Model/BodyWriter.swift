/// What a `BodyStream`'s producer writes through. Pieces should be tens of kilobytes: each
/// becomes one chunk on the wire.
public struct BodyWriter: Sendable {
  let sink: @Sendable ([UInt8]) async throws -> Void

  init(_ sink: @escaping @Sendable ([UInt8]) async throws -> Void) {
    self.sink = sink
  }

  /// Queues `bytes` for the client; returns once the connection has room for more. Throws
  /// `CancellationError` when the client has gone (or the task was cancelled).
  public func write(_ bytes: [UInt8]) async throws {
    guard !bytes.isEmpty else { return }
    try await sink(bytes)
  }
}
