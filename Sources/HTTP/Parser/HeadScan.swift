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
}
