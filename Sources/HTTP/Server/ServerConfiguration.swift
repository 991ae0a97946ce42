import Foundation

/// Every limit and timeout of the server, in one value.
public struct ServerConfiguration: Sendable {
  /// Address to bind: an IPv4 or IPv6 literal. Default `127.0.0.1`.
  public var host = "127.0.0.1"
  /// TCP port; 0 picks a free one (`HTTPServer.start()` returns it). Default 8080.
  public var port = 8080
  /// Event-loop threads, each with its own epoll and listening socket. Default: one per core.
  public var eventLoopCount = ProcessInfo.processInfo.activeProcessorCount
  /// Request line plus header section, in bytes; beyond it, 431. Default 16 KiB.
  public var maxHeadBytes = 16 * 1024
  /// Header fields per request (and per trailer section); beyond it, 431. Default 100.
  public var maxHeaderCount = 100
  /// Request-target length in bytes; beyond it, 414. Default 8 KiB.
  public var maxTargetBytes = 8 * 1024
  /// Request body in bytes (declared or decoded); beyond it, 413 and close, body unread.
  /// Default 1 MiB.
  public var maxBodyBytes = 1024 * 1024
  /// Bytes of request bodies held at once across all loops, beyond the first
  /// `bodyBytesAlwaysHeld` of each: a body that would take more gets 503 with `Retry-After`
  /// and the connection is closed. Without it, connections each holding a nearly complete
  /// 1 MiB body (kept under the body-rate check by sending it fast, then stalling) held
  /// `maxConnections` MiB. Default 128 MiB.
  public var maxBufferedBodyBytes = 128 * 1024 * 1024
  /// The part of every body admitted whatever the others hold: orders, signed transactions
  /// and notifications fit in it, so large bodies filling the budget cannot refuse them.
  /// Default 64 KiB.
  public var bodyBytesAlwaysHeld = 64 * 1024
  /// Open connections across all loops; past it, new ones get 503 and are closed.
  /// Default 10 000.
  public var maxConnections = 10_000
  /// Async handlers running at once across all loops; past it, 503 with `Retry-After`.
  /// Default 4096.
  public var maxInFlightRequests = 4096
  /// Deadline for a whole request head, from its first byte (slowloris): 408 and close.
  /// Default 10 s.
  public var headTimeout: Duration = .seconds(10)
  /// Minimum average body upload rate, measured once `bodyRateGracePeriod` has passed;
  /// slower: 408 and close. Default 1024 bytes/s.
  public var minBodyBytesPerSecond = 1024
  /// How long a body may arrive before its rate is judged. Default 2 s.
  public var bodyRateGracePeriod: Duration = .seconds(2)
  /// A keep-alive connection with no request in progress is closed silently after this long;
  /// also the limit on a response write making no progress (a client that stopped reading a
  /// streamed body). Default 60 s.
  public var idleTimeout: Duration = .seconds(60)
  /// Bytes of a streamed body (`BodyStream`) the server holds unsent before its producer
  /// waits: the memory one export costs, whatever its size or its reader's speed. A client
  /// that reads nothing for `idleTimeout` is closed, which stops the producer. Default 256 KiB.
  public var streamBufferBytes = 256 * 1024
  /// On shutdown, how long in-flight requests may take to finish before connections are
  /// closed regardless. Default 10 s.
  public var shutdownGracePeriod: Duration = .seconds(10)
  /// `Retry-After` seconds sent with 503 when overloaded. Default 1.
  public var retryAfterSeconds = 1
  /// Header names most requests carry and longer than 15 bytes, which the parser then shares
  /// instead of allocating per request (`SharedFieldNames`). Default none.
  public var sharedFieldNames: [String] = []

  public init() {}

  var parserLimits: ParserLimits {
    var limits = ParserLimits(
      maxHeadBytes: maxHeadBytes, maxHeaderCount: maxHeaderCount, maxTargetBytes: maxTargetBytes,
      maxBodyBytes: maxBodyBytes)
    limits.sharedFieldNames = SharedFieldNames(sharedFieldNames)
    return limits
  }
}

extension Duration {
  var nanoseconds: UInt64 {
    let (seconds, attoseconds) = components
    guard seconds >= 0 else { return 0 }
    return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
  }
}
