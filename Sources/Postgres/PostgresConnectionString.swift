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

  /// Why libpq would read a URL's password (or user name) as something else, nil when it
  /// would not: an `@` or `/` in it that is not percent-encoded. libpq ends the userinfo at the
  /// first `@` (and has none when a `/` comes first), so the rest of such a password becomes
  /// the host or the port; the URL still parses, and the connection's failure quotes that
  /// host or port. The answer names no part of the URL. Nil for a `key=value` string.
  public var userinfoProblem: String? {
    guard let rest = urlRest else { return nil }
    let advice =
      "percent-encode @, / and : in the user name, password and database name (%40, %2F, %3A)"
    let head = Self.beforeQuery(rest)
    let ats = head.filter { $0 == "@" }.count
    if ats > 1 {
      return "has more than one @: libpq ends the user name and password at the first and "
        + "would take the rest of the password for the host; \(advice)"
    }
    if ats == 1, let at = head.firstIndex(of: "@"), head[..<at].contains("/") {
      return "has a / before its @: libpq would take the password for the port and the rest "
        + "for the database; \(advice)"
    }
    // A `?` in the password hides the rest from the checks above; libpq's own reading tells.
    let (hosts, ports) = parsedHostsAndPorts
    if hosts.contains(where: { $0.contains("@") }) {
      return "has a host with an @ in it (libpq's reading of a password holding @); \(advice)"
    }
    if ports.contains(where: { !$0.isEmpty && !$0.allSatisfy({ $0.isASCII && $0.isNumber }) }) {
      return "has a port that is not a number (libpq's reading of a password holding / or :, "
        + "when it is not a typo); \(advice)"
    }
    return nil
  }

  /// The URL after its `postgresql://` or `postgres://`, nil for a `key=value` string.
  private var urlRest: Substring? {
    for scheme in ["postgresql://", "postgres://"] where text.hasPrefix(scheme) {
      return text.dropFirst(scheme.count)
    }
    return nil
  }

  /// The URL up to its query, as the operator meant it: a `?` before the first `@` belongs to
  /// the password, unless a `/` comes before it (then the `@` is in the query, as in
  /// `?application_name=a@b`).
  private static func beforeQuery(_ rest: Substring) -> Substring {
    guard let firstAt = rest.firstIndex(of: "@") else { return rest.prefix { $0 != "?" } }
    let beforeAt = rest[..<firstAt]
    if let question = beforeAt.firstIndex(of: "?"), beforeAt[..<question].contains("/") {
      return rest[..<question]
    }
    return rest[..<(rest[firstAt...].firstIndex(of: "?") ?? rest.endIndex)]
  }

  /// libpq's `host` and `port`, comma-separated lists split; empty when it cannot parse.
  private var parsedHostsAndPorts: (hosts: [Substring], ports: [Substring]) {
    let options = parsedOptions
    func list(_ keyword: String) -> [Substring] {
      options[keyword].map { $0.split(separator: ",", omittingEmptySubsequences: false) } ?? []
    }
    return (list("host"), list("port"))
  }

  /// What libpq reads from the string, keyword by keyword (only those given); empty when it
  /// cannot parse it.
  private var parsedOptions: [String: String] {
    guard let parsed = PQconninfoParse(text, nil) else { return [:] }
    defer { PQconninfoFree(parsed) }
    var options: [String: String] = [:]
    var option = parsed
    while let keyword = option.pointee.keyword {
      if let value = option.pointee.val {
        options[String(cString: keyword)] = String(cString: value)
      }
      option += 1
    }
    return options
  }

  /// Whether this string and `other` lead to the same database on a server they share: one
  /// `host:port` in common (`hostaddr` over `host`, names compared without case, a missing
  /// port read as `defaultPort`, a missing host as libpq's default, the same for both) and the
  /// same database name (a missing one read as the user name, as libpq does). Names that
  /// resolve alike (`localhost`, `127.0.0.1`) are not recognised as one.
  public func sharesServerAndDatabase(with other: PostgresConnectionString, defaultPort: String)
    -> Bool
  {
    let (mine, theirs) = (target(defaultPort: defaultPort), other.target(defaultPort: defaultPort))
    return mine.database == theirs.database && !mine.endpoints.isDisjoint(with: theirs.endpoints)
  }

  private func target(defaultPort: String) -> (endpoints: Set<String>, database: String) {
    let options = parsedOptions
    let hosts = (options["hostaddr"].flatMap { $0.isEmpty ? nil : $0 } ?? options["host"] ?? "")
      .split(separator: ",", omittingEmptySubsequences: false).map { $0.lowercased() }
    let ports = (options["port"] ?? "").split(separator: ",", omittingEmptySubsequences: false)
      .map { $0.isEmpty ? defaultPort : String($0) }
    var endpoints: Set<String> = []
    for (index, host) in hosts.enumerated() {
      // One port for several hosts applies to each, as libpq reads it.
      let port =
        ports.isEmpty ? defaultPort : ports[ports.count == 1 ? 0 : min(index, ports.count - 1)]
      endpoints.insert("\(host)|\(port)")
    }
    let database = options["dbname"].flatMap { $0.isEmpty ? nil : $0 } ?? options["user"] ?? ""
    return (endpoints, database)
  }

  /// `message` with every password this string carries replaced by `***`, as written and
  /// percent-decoded: the URL's `user:password@` and each `password=` query parameter, or a
  /// `key=value` string's `password`. Found by reading the text as libpq would, so a string
  /// libpq refuses still has its passwords found; and again with everything between `://` and
  /// the last `@` before the query (`beforeQuery`) taken as the userinfo, so a password that
  /// holds an `@` or `/` not percent-encoded is masked whole, and so is each piece of it libpq
  /// took for a host, a port or a database name.
  public func masking(_ message: String) -> String {
    var secrets: Set<String> = []
    for raw in passwords where !raw.isEmpty {
      secrets.insert(String(raw))
      if let decoded = raw.removingPercentEncoding, !decoded.isEmpty { secrets.insert(decoded) }
    }
    // The pieces libpq took for a host, a port or a database name are masked where they stand
    // alone (quoted, or beside an `@` or `:`), so a short one does not eat into other words.
    var pieces: Set<String> = []
    if let password = lastAtPassword {
      secrets.insert(String(password))
      if let decoded = password.removingPercentEncoding { secrets.insert(decoded) }
      for piece in password.split(whereSeparator: { $0 == "@" || $0 == "/" }) {
        pieces.insert(String(piece))
        if let decoded = piece.removingPercentEncoding { pieces.insert(decoded) }
      }
    }
    secrets.remove("")
    pieces.remove("")
    // Longest first, so a password that holds another is masked whole.
    let masked = secrets.sorted { $0.count > $1.count }.reduce(message) {
      $0.replacingOccurrences(of: $1, with: "***")
    }
    return pieces.sorted { $0.count > $1.count }.reduce(masked) { Self.maskingWhole($1, in: $0) }
  }

  /// `text` with each occurrence of `piece` that no letter or digit touches replaced by `***`.
  private static func maskingWhole(_ piece: String, in text: String) -> String {
    func standsAlone(_ character: Character?) -> Bool {
      guard let character else { return true }
      return !(character.isLetter || character.isNumber)
    }
    var result = ""
    var rest = Substring(text)
    while let range = rest.range(of: piece) {
      let before =
        range.lowerBound > rest.startIndex
        ? rest[rest.index(before: range.lowerBound)] : result.last
      let after = range.upperBound < rest.endIndex ? rest[range.upperBound] : nil
      result += rest[..<range.lowerBound]
      result += standsAlone(before) && standsAlone(after) ? "***" : String(rest[range])
      rest = rest[range.upperBound...]
    }
    return result + rest
  }

  /// The password values as they appear in the text.
  var passwords: [Substring] {
    guard let rest = urlRest else { return keywordPasswords }
    return urlPasswords(rest)
  }

  /// The URL's password when its userinfo is taken to end at the last `@` before the query
  /// (the operator's meaning when the password holds an `@` or `/`), nil without one.
  private var lastAtPassword: Substring? {
    guard let rest = urlRest else { return nil }
    let head = Self.beforeQuery(rest)
    guard let at = head.lastIndex(of: "@"), let colon = head[..<at].firstIndex(of: ":") else {
      return nil
    }
    let password = head[head.index(after: colon)..<at]
    return password.isEmpty ? nil : password
  }

  /// The parameters whose values are secrets: the password, and the passphrase of the client
  /// certificate's key.
  static let secretKeys: Set<String> = ["password", "sslpassword"]

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
        if Self.secretKeys.contains(key.removingPercentEncoding ?? String(key)) {
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
      if Self.secretKeys.contains(String(key)) { found.append(text[valueStart..<index]) }
      if index < text.endIndex { index = text.index(after: index) }
    }
    return found
  }
}
