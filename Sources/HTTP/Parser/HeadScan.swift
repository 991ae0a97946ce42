/// Looks for the empty line that ends a request head, checking every line ending on the way.
/// Resumable to the byte: each call starts where the previous one stopped, so a head dribbled
/// one byte per read is still looked at once (resuming at the current line's start made a
/// 16 KiB line sent byte by byte cost 130 million comparisons).
struct HeadScan {
  enum Outcome {
    /// The head ends just before this absolute index.
    case complete(end: Int)
    /// Every byte buffered so far is checked; more are needed.
    case incomplete
    case failed(ParseError)
  }

  /// Where the line being read begins, relative to the head's start.
  var lineStart = 0
  /// The first byte not yet looked at, relative to the head's start.
  var scanned = 0
  var sawRequestLine = false
  /// Spaces seen on the request-line, up to two (a CR after the first also ends the target).
  var requestLineSpaces = 0
  /// The request-target's length so far, so an overlong one is refused before its line ends.
  var targetLength = 0
  /// Bytes looked at over every call for this head: linear in the head, whatever the reads.
  var bytesExamined = 0

  /// Scans `raw` from where the last call stopped. `start`, the head's first byte, moves past
  /// empty lines sent before the request-line (RFC 9112 §2.2 ignores them).
  mutating func run(_ raw: UnsafeRawBufferPointer, start: inout Int) -> Outcome {
    var lineBegin = start + lineStart
    var i = start + scanned
    let resumedAt = i
    defer {
      bytesExamined += i - resumedAt
      lineStart = lineBegin - start
      scanned = i - start
    }
    // The line's first two bytes decide whether it can begin a request (a CR alone cannot
    // tell); once both were there they were judged.
    if !sawRequestLine && i - lineBegin < 2 && Self.cannotBeginRequestLine(raw, at: lineBegin) {
      return .failed(.notARequest)
    }
    while i < raw.count {
      let byte = raw[i]
      guard byte == ByteClass.lf else {
        if !sawRequestLine { noteRequestLineByte(byte) }
        i += 1
        continue
      }
      guard i > lineBegin, raw[i - 1] == ByteClass.cr else {
        return .failed(.bad("Lines must end with CRLF (bare LF)."))
      }
      if i - 1 == lineBegin {
        guard sawRequestLine else {
          start = i + 1
          lineBegin = start
          i = start
          requestLineSpaces = 0
          targetLength = 0
          if Self.cannotBeginRequestLine(raw, at: lineBegin) { return .failed(.notARequest) }
          continue
        }
        i += 1
        return .complete(end: i)
      }
      sawRequestLine = true
      lineBegin = i + 1
      i += 1
    }
    return .incomplete
  }

  private mutating func noteRequestLineByte(_ byte: UInt8) {
    switch requestLineSpaces {
    case 0:
      if byte == ByteClass.space { requestLineSpaces = 1 }
    case 1:
      if byte == ByteClass.space || byte == ByteClass.cr {
        requestLineSpaces = 2
      } else {
        targetLength += 1
      }
    default:
      break
    }
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
