/// Finds `$n` parameter placeholders in SQL text, skipping string literals, quoted
/// identifiers, comments and dollar-quoted bodies, so that appending one query to another can
/// shift the numbers without touching text that only looks like a placeholder.
enum PostgresPlaceholders {
  static func renumber(_ sql: String, offset: Int) -> String {
    guard offset != 0, sql.utf8.contains(UInt8(ascii: "$")) else { return sql }
    let s = Array(sql.utf8)
    var out = [UInt8]()
    out.reserveCapacity(s.count + 8)
    var i = 0
    func copy(upTo end: Int) {
      out.append(contentsOf: s[i..<end])
      i = end
    }
    while i < s.count {
      let c = s[i]
      switch c {
      case UInt8(ascii: "'"):
        let escapes = i > 0 && (s[i - 1] == UInt8(ascii: "E") || s[i - 1] == UInt8(ascii: "e"))
        copy(upTo: endOfQuoted(s, from: i, quote: c, backslashEscapes: escapes))
      case UInt8(ascii: "\""):
        copy(upTo: endOfQuoted(s, from: i, quote: c, backslashEscapes: false))
      case UInt8(ascii: "-") where i + 1 < s.count && s[i + 1] == UInt8(ascii: "-"):
        var end = i
        while end < s.count, s[end] != UInt8(ascii: "\n") { end += 1 }
        copy(upTo: end)
      case UInt8(ascii: "/") where i + 1 < s.count && s[i + 1] == UInt8(ascii: "*"):
        copy(upTo: endOfBlockComment(s, from: i))
      case UInt8(ascii: "$"):
        var end = i + 1
        while end < s.count, isDigit(s[end]) { end += 1 }
        if end > i + 1, !(i > 0 && isIdentifierChar(s[i - 1])) {
          let number = Int(String(decoding: s[(i + 1)..<end], as: UTF8.self)) ?? 0
          out.append(UInt8(ascii: "$"))
          out.append(contentsOf: String(number + offset).utf8)
          i = end
        } else if let close = endOfDollarQuote(s, from: i) {
          copy(upTo: close)
        } else {
          copy(upTo: i + 1)
        }
      default:
        // Up to the next byte that may start one of the cases above, in one copy: a byte at a
        // time, renumbering was a twentieth of the server's CPU per settled report.
        var end = i + 1
        while end < s.count, !mayStartToken(s[end]) { end += 1 }
        copy(upTo: end)
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  private static func mayStartToken(_ c: UInt8) -> Bool {
    c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") || c == UInt8(ascii: "-")
      || c == UInt8(ascii: "/") || c == UInt8(ascii: "$")
  }

  private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

  private static func isIdentifierChar(_ c: UInt8) -> Bool {
    isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x5f || c >= 0x80
  }

  private static func endOfQuoted(
    _ s: [UInt8], from start: Int, quote: UInt8, backslashEscapes: Bool
  )
    -> Int
  {
    var i = start + 1
    while i < s.count {
      if backslashEscapes && s[i] == UInt8(ascii: "\\") {
        i += 2
        continue
      }
      if s[i] == quote {
        if i + 1 < s.count && s[i + 1] == quote {
          i += 2
          continue
        }
        return i + 1
      }
      i += 1
    }
    return s.count
  }

  private static func endOfBlockComment(_ s: [UInt8], from start: Int) -> Int {
    var depth = 0
    var i = start
    while i + 1 < s.count {
      if s[i] == UInt8(ascii: "/") && s[i + 1] == UInt8(ascii: "*") {
        depth += 1
        i += 2
      } else if s[i] == UInt8(ascii: "*") && s[i + 1] == UInt8(ascii: "/") {
        depth -= 1
        i += 2
        if depth == 0 { return i }
      } else {
        i += 1
      }
    }
    return s.count
  }

  /// `$tag$ … $tag$` (tag may be empty); returns the index after the closing tag.
  private static func endOfDollarQuote(_ s: [UInt8], from start: Int) -> Int? {
    var tagEnd = start + 1
    while tagEnd < s.count, s[tagEnd] != UInt8(ascii: "$") {
      guard isIdentifierChar(s[tagEnd]) else { return nil }
      tagEnd += 1
    }
    guard tagEnd < s.count else { return nil }
    let tag = Array(s[start...tagEnd])
    var i = tagEnd + 1
    while i + tag.count <= s.count {
      if s[i] == UInt8(ascii: "$") && Array(s[i..<(i + tag.count)]) == tag {
        return i + tag.count
      }
      i += 1
    }
    return s.count
  }
}
