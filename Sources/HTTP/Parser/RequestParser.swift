/// An incremental HTTP/1.1 request parser (RFC 9112). A pure value: feed it bytes as they
/// arrive, then pull events with `next()` until it returns nil (more bytes needed).
///
/// Every request yields `.head`, zero or more `.body`, then `.end`. Bytes past the end of one
/// request stay buffered for the next (pipelining); the caller decides when to pull them.
/// Framing is strict: anything ambiguous is an error, and after an error the parser only
/// repeats it — the connection must be closed.
public struct RequestParser: Sendable {
  public enum Event: Sendable {
    case head(RequestHead)
    case body([UInt8])
    case end(trailers: HTTPHeaders)
  }

  enum State: Sendable {
    case head
    case endPending
    case fixedBody(remaining: Int)
    case chunkSize
    case chunkData(remaining: Int)
    case chunkDataEnd
    case trailers
    case failed(ParseError)
  }

  public var limits: ParserLimits
  var state: State = .head
  var buffer: [UInt8] = []
  /// Index of the first unconsumed byte in `buffer`.
  var start = 0
  /// How far the head arriving now has been scanned.
  var headScan = HeadScan()
  /// Bytes of the chunked body so far, its framing included.
  var bodyTotal = 0
  /// How far `takeLine` has looked for the end of a chunk-size or trailer line, from `start`.
  var lineScanned = 0
  var trailers = HTTPHeaders()
  var trailerBytes = 0

  public init(limits: ParserLimits = .init()) { self.limits = limits }

  /// Bytes received but not yet consumed by events.
  public var bufferedByteCount: Int { buffer.count - start }

  /// True between messages: the next event would be a new request's head.
  public var isAtMessageBoundary: Bool {
    if case .head = state { return true }
    return false
  }

  /// Part of a head has arrived but not all of it.
  public var hasPartialHead: Bool { isAtMessageBoundary && bufferedByteCount > 0 }

  public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
    compact()
    buffer.append(contentsOf: bytes)
  }

  public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
    compact()
    buffer.append(contentsOf: bytes)
  }

  /// The next event, nil when more bytes are needed.
  public mutating func next() throws(ParseError) -> Event? {
    do {
      return try step()
    } catch {
      state = .failed(error)
      throw error
    }
  }

  private mutating func step() throws(ParseError) -> Event? {
    switch state {
    case .failed(let error):
      throw error
    case .head:
      guard let head = try parseHeadIfComplete() else { return nil }
      bodyTotal = 0
      switch head.framing {
      case .none, .length(0): state = .endPending
      case .length(let n): state = .fixedBody(remaining: n)
      case .chunked: state = .chunkSize
      }
      return .head(head)
    case .endPending:
      state = .head
      return .end(trailers: HTTPHeaders())
    case .fixedBody(let remaining):
      guard let chunk = take(upTo: remaining) else { return nil }
      state =
        remaining == chunk.count ? .endPending : .fixedBody(remaining: remaining - chunk.count)
      return .body(chunk)
    case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
      return try stepChunked()
    }
  }

  /// Consumes up to `limit` buffered bytes as a body chunk; nil when nothing is buffered.
  mutating func take(upTo limit: Int) -> [UInt8]? {
    let n = min(limit, bufferedByteCount)
    guard n > 0 else { return nil }
    let chunk = Array(buffer[start..<start + n])
    consume(n)
    return chunk
  }

  mutating func consume(_ n: Int) {
    start += n
    if start == buffer.count {
      // Everything consumed: reuse the storage from the front without copying.
      buffer.removeAll(keepingCapacity: true)
      start = 0
    }
  }

  /// Bytes the buffer's storage holds room for, used or not.
  var storageCapacity: Int { buffer.capacity }

  /// Lets go of storage grown for a large head or body once nothing is buffered, keeping at
  /// most `limit` bytes: `consume` keeps the storage for the next bytes, and a connection
  /// that stays open after one 60 KB body would otherwise hold 64 KiB for as long as it idles.
  mutating func releaseStorage(keepingAtMost limit: Int) {
    guard bufferedByteCount == 0, buffer.capacity > limit else { return }
    buffer = []
    start = 0
  }

  private mutating func compact() {
    if start > 0 && start >= 4096 && start * 2 >= buffer.count {
      buffer.removeSubrange(0..<start)
      start = 0
    }
  }
}
