import CPostgres
import Foundation

/// A `postgresql://` URL or a libpq `key=value` string, as an operator wrote it, with what is
/// needed to talk about it safely: libpq quotes what it could not parse (the whole URI, or the
/// token it choked on), that may be the password, and such messages are logged, while the
/// environment the URL came from is readable by root alone.
public struct PostgresConnectionString: Sendable {
  public let text: String

  public init(_ text: String) {
    self.text = text
  }

  /// libpq's complaint about the string, every password in it masked; nil when libpq parses
  /// it (which says nothing of whether the server is there).
  public var problem: String? {
    var errorMessage: UnsafeMutablePointer<CChar>?
    guard let parsed = PQconninfoParse(text, &errorMessage) else {
      let message = errorMessage.map { String(cString: $0) } ?? "invalid connection string"
      if let errorMessage { PQfreemem(errorMessage) }
      return masking(message.trimmingTrailingNewlines)
    }
    PQconninfoFree(parsed)
    return nil
  }

  /// `message` with every password this string carries replaced by `***`, as written and
  /// percent-decoded: the URL's `user:password@` and each `password=` query parameter, or a
  /// `key=value` string's `password`. Found by reading the text as libpq would, so a string
  /// libpq refuses still has its passwords found.
  public func masking(_ message: String) -> String {
    var secrets: Set<String> = []
    for raw in passwords where !raw.isEmpty {
      secrets.insert(String(raw))
      if let decoded = raw.removingPercentEncoding, !decoded.isEmpty { secrets.insert(decoded) }
    }
    // Longest first, so a password that holds another is masked whole.
    return secrets.sorted { $0.count > $1.count }.reduce(message) {
      $0.replacingOccurrences(of: $1, with: "***")
    }
  }

  /// The password values as they appear in the text.
  var passwords: [Substring] {
    for scheme in ["postgresql://", "postgres://"] where text.hasPrefix(scheme) {
      return urlPasswords(text.dropFirst(scheme.count))
    }
    return keywordPasswords
  }

  /// libpq's URI grammar: the userinfo ends at the first `@` before any `/` (the password after
  /// its first `:`), and the query after the first `?` is `&`-separated `key=value` pairs.
  private func urlPasswords(_ rest: Substring) -> [Substring] {
    var found: [Substring] = []
    if let end = rest.firstIndex(where: { $0 == "@" || $0 == "/" }), rest[end] == "@",
      let colon = rest[..<end].firstIndex(of: ":")
    {
      found.append(rest[rest.index(after: colon)..<end])
    }
    if let question = rest.firstIndex(of: "?") {
      for pair in rest[rest.index(after: question)...].split(separator: "&") {
        guard let equals = pair.firstIndex(of: "=") else { continue }
        let key = pair[..<equals]
        if (key.removingPercentEncoding ?? String(key)) == "password" {
          found.append(pair[pair.index(after: equals)...])
        }
      }
    }
    return found
  }

  /// libpq's `key = value` grammar: a value is a run of non-blanks, or single-quoted with
  /// backslash escapes (the closing quote may be missing from a malformed string).
  private var keywordPasswords: [Substring] {
    var found: [Substring] = []
    var index = text.startIndex
    func skipBlanks() {
      while index < text.endIndex, text[index].isWhitespace { index = text.index(after: index) }
    }
    while index < text.endIndex {
      skipBlanks()
      let keyStart = index
      while index < text.endIndex, !text[index].isWhitespace, text[index] != "=" {
        index = text.index(after: index)
      }
      let key = text[keyStart..<index]
      skipBlanks()
      guard index < text.endIndex, text[index] == "=" else { continue }
      index = text.index(after: index)
      skipBlanks()
      let valueStart: String.Index
      if index < text.endIndex, text[index] == "'" {
        index = text.index(after: index)
        valueStart = index
        while index < text.endIndex, text[index] != "'" {
          if text[index] == "\\", text.index(after: index) < text.endIndex {
            index = text.index(after: index)
          }
          index = text.index(after: index)
        }
      } else {
        valueStart = index
        while index < text.endIndex, !text[index].isWhitespace { index = text.index(after: index) }
      }
      if key == "password" { found.append(text[valueStart..<index]) }
      if index < text.endIndex { index = text.index(after: index) }
    }
    return found
  }
}
