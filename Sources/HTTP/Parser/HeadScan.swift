/// Looks for the empty line that ends a request head, checking every line ending on the way.
/// Resumable: `scanned` says where the previous call stopped, so dribbled bytes are scanned
/// once.
struct HeadScan {
  enum Outcome {
    /// The head ends just before this absolute index.
    case complete(end: Int)
    /// Lines up to `scanned` (relative to `start`) are checked; more bytes are needed.
    case incomplete(scanned: Int)
    case failed(ParseError)
  }

  var start: Int
  var sawRequestLine: Bool
  var outcome: Outcome

  static func run(_ raw: UnsafeRawBufferPointer, start: Int, scanned: Int, sawRequestLine: Bool)
    -> HeadScan
  {
    var scan = HeadScan(
      start: start, sawRequestLine: sawRequestLine, outcome: .incomplete(scanned: 0))
    var lineStart = start + scanned
    if !sawRequestLine && cannotBeginRequestLine(raw, at: lineStart) {
      scan.outcome = .failed(.notARequest)
      return scan
    }
    var i = lineStart
    while i < raw.count {
      guard raw[i] == ByteClass.lf else {
        i += 1
        continue
      }
      guard i > lineStart, raw[i - 1] == ByteClass.cr else {
        scan.outcome = .failed(.bad("Lines must end with CRLF (bare LF)."))
        return scan
      }
      if i - 1 == lineStart {
        if !scan.sawRequestLine {
          // RFC 9112 §2.2: empty lines before the request-line are ignored.
          scan.start = i + 1
          lineStart = scan.start
          i = scan.start
          if cannotBeginRequestLine(raw, at: lineStart) {
            scan.outcome = .failed(.notARequest)
            return scan
          }
          continue
        }
        scan.outcome = .complete(end: i + 1)
        return scan
      }
      scan.sawRequestLine = true
      lineStart = i + 1
      i += 1
    }
    scan.outcome = .incomplete(scanned: lineStart - scan.start)
    return scan
  }

  /// Before a request-line only empty lines may come (RFC 9112 §2.2), and a request-line
  /// begins with a method token (tchar). A byte that can begin neither fails at once, so a
  /// client speaking another protocol on this port (a TLS ClientHello starts with 0x16) gets
  /// its 400 now instead of at the head timeout.
  static func cannotBeginRequestLine(_ raw: UnsafeRawBufferPointer, at i: Int) -> Bool {
    guard i < raw.count else { return false }
    let c = raw[i]
    // A bare LF is left to the scan, which names it.
    if ByteClass.isToken(c) || c == ByteClass.lf { return false }
    guard c == ByteClass.cr else { return true }
    // A CR here can only start an empty line.
    return i + 1 < raw.count && raw[i + 1] != ByteClass.lf
  }
}
