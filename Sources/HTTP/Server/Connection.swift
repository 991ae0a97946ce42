/// One client connection. Owned by exactly one event loop and touched only on its thread.
final class Connection {
  enum Phase {
    /// Between requests: waiting for (the rest of) a head.
    case idle
    /// Head parsed, body arriving.
    case body
    /// Request complete, waiting for its handler's response. Later pipelined requests wait
    /// in the parser's buffer.
    case inFlight
    /// The head of a streamed body is out and its chunks follow as the producer makes them
    /// (`streaming`); later pipelined requests wait as for `inFlight`.
    case streaming
    /// Final response sent and our side shut down; draining input until the peer closes, so
    /// unread bytes do not turn our close into a reset that destroys the response.
    case lingering
  }

  enum DeadlineKind {
    case idle, head, bodyRate, write, linger
  }

  /// What the access log and the response writer need about the request being answered.
  struct Current {
    var method: HTTPMethod
    var path: String
    var requestId: String
    var started: UInt64
    var keepAlive: Bool
    var http10: Bool
    /// The task running an async handler: cancelled when the client goes away first, so work
    /// whose answer nobody will read (a report waiting for a verification slot) stops.
    var handler: Task<Void, Never>? = nil
  }

  /// A streamed body being written.
  struct Streaming {
    var channel: StreamChannel
    var status: Int
    /// The head allowed keep-alive: after the last chunk the connection may stay open.
    var keepAlive: Bool
    var bodyBytes = 0
    var wireBytes: Int
  }

  let fd: Int32
  let generation: UInt32
  let remoteAddress: String
  var parser: RequestParser
  var phase = Phase.idle

  var head: RequestHead?
  var body: [UInt8] = []
  var bodyStart: UInt64 = 0
  var bodyReceived = 0
  /// Bytes of the shared body budget this connection's request holds (`ServerShared`),
  /// given back when it is answered or the connection closes.
  var bodyCharge = 0
  var current: Current?
  var streaming: Streaming?

  /// When the head now arriving began (0: no partial head).
  var headStart: UInt64 = 0
  /// When the connection last became idle.
  var idleSince: UInt64

  var output: [UInt8] = []
  var outputOffset = 0
  var lastWriteProgress: UInt64 = 0
  /// After the pending output, stop: the last response said `Connection: close`.
  var closeAfterWrite = false
  /// The peer shut down its side (read returned 0).
  var inputClosed = false
  /// Events currently registered with epoll.
  var interest: UInt32

  var deadline: UInt64 = 0
  var deadlineKind = DeadlineKind.idle
  /// Earliest entry this connection has in the deadline queue (0: none).
  var scheduledAt: UInt64 = 0

  /// Links of the loop's `IdleConnections`. Not counted references (the loop's `connections`
  /// table owns every connection): they change twice per request, and every close unlinks
  /// before the table lets go, so a link never outlives its target. `Unmanaged`, not
  /// `unowned(unsafe)`: following an unowned link into a local retains the target.
  var isIdleListed = false
  var idleOlder: Unmanaged<Connection>?
  var idleNewer: Unmanaged<Connection>?

  init(
    fd: Int32, generation: UInt32, remoteAddress: String, limits: ParserLimits, now: UInt64,
    interest: UInt32
  ) {
    self.fd = fd
    self.generation = generation
    self.remoteAddress = remoteAddress
    self.parser = RequestParser(limits: limits)
    self.idleSince = now
    self.interest = interest
  }

  var hasPendingOutput: Bool { outputOffset < output.count }

  /// Storage the output and parse buffers keep between requests: room for the heads and small
  /// answers most requests have, so a busy connection does not allocate per request, while
  /// 10,000 idle connections cost tens of MiB, not the 2 GB they cost when each kept what one
  /// large answer or body had grown it to.
  static let retainedBufferBytes = 4 * 1024

  /// Gives back buffer storage grown past `retainedBufferBytes` once it holds nothing: the
  /// output once the last answer is written (not mid-stream, whose next piece would grow it
  /// again at once), the parser's once no further request is buffered. Called after every
  /// step of the connection, so a connection left idle keeps only a few KiB.
  func releaseSpareBuffers() {
    if !hasPendingOutput && phase != .streaming && output.capacity > Self.retainedBufferBytes {
      output = []
      outputOffset = 0
    }
    parser.releaseStorage(keepingAtMost: Self.retainedBufferBytes)
  }
}
