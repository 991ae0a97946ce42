import Foundation
import StorekeeperCore

/// One entry of `ADMIN_TOKENS`: a name (what the audit trail records), the credential, and what
/// it may do.
///
/// Syntax, entries separated by commas:
/// - `name:token` — a token kept as written (at least 16 characters), scope `write`;
/// - `name:sha256:HEX` — only the token's SHA-256 (64 hex digits) is kept, so the environment
///   never holds the token itself;
/// - either form with a `:read` or `:write` suffix sets the scope (`write` implies `read`).
///
/// Names and tokens cannot contain `:` or `,`; names are unique, so every audit row names one
/// token.
public struct AdminToken: Sendable, Equatable {
  public enum Credential: Sendable, Equatable {
    case plain([UInt8])
    case sha256([UInt8])
  }

  public var name: String
  public var credential: Credential
  public var scope: AdminScope

  public init(name: String, credential: Credential, scope: AdminScope = .write) {
    self.name = name
    self.credential = credential
    self.scope = scope
  }

  /// A token kept as written.
  public init(name: String, token: String, scope: AdminScope = .write) {
    self.init(name: name, credential: .plain(Array(token.utf8)), scope: scope)
  }

  static let minimumLength = 16

  /// Parses `ADMIN_TOKENS`; the error says which entry is wrong without repeating any secret.
  /// Whitespace around an entry and around each of its fields (newlines included: a secret
  /// file's last line ends in one) is dropped, since a presented token never carries it; a
  /// control character left inside is refused.
  package static func parseList(_ text: String) throws -> [AdminToken] {
    var tokens: [AdminToken] = []
    for (index, raw) in text.split(separator: ",").enumerated() {
      let entry = raw.trimmingCharacters(in: .whitespacesAndNewlines)
      guard !entry.isEmpty else { continue }
      guard !containsControl(entry) else {
        throw problem("entry \(index + 1) holds a control character")
      }
      let token = try parse(Substring(entry), position: index + 1)
      guard !tokens.contains(where: { $0.name == token.name }) else {
        throw problem("names \"\(token.name)\" twice; each token needs a name of its own")
      }
      tokens.append(token)
    }
    return tokens
  }

  private static func parse(_ entry: Substring, position: Int) throws -> AdminToken {
    var parts = entry.split(separator: ":", omittingEmptySubsequences: false).map {
      $0.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    guard parts.count >= 2, !parts[0].isEmpty else {
      throw problem(
        "entry \(position) must look like name:token, name:sha256:HEX, optionally ending :read or :write"
      )
    }
    let name = parts.removeFirst()
    // "sha256:HEX" would otherwise be a token named sha256 whose value is the digest: the
    // environment would hold a working token again, which the digest form is there to avoid.
    guard name != "sha256" else {
      throw problem("entry \(position) has no name before sha256: write name:sha256:HEX")
    }
    var scope = AdminScope.write
    if parts.count > 1, let last = parts.last, let parsed = AdminScope(rawValue: last) {
      scope = parsed
      parts.removeLast()
    }
    if parts.count == 2, parts[0] == "sha256" {
      guard let digest = hexBytes(parts[1]), digest.count == 32 else {
        throw problem("the sha256 of \"\(name)\" must be 64 hexadecimal digits")
      }
      return AdminToken(name: name, credential: .sha256(digest), scope: scope)
    }
    guard parts.count == 1 else {
      throw problem(
        "entry \"\(name)\" has too many ':' (tokens cannot contain ':'; the scope is read or write)"
      )
    }
    guard parts[0].count >= minimumLength else {
      throw problem("token of \"\(name)\" is shorter than \(minimumLength) characters")
    }
    return AdminToken(name: name, token: parts[0], scope: scope)
  }

  /// Whether `text` holds a control character (a newline, a tab, NUL…), which no token
  /// presented in an `Authorization` header carries.
  package static func containsControl<S: StringProtocol>(_ text: S) -> Bool {
    text.unicodeScalars.contains { $0.properties.generalCategory == .control }
  }

  static func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
      guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
        return nil
      }
      bytes.append(high << 4 | low)
    }
    return bytes
  }

  private static func nibble(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  private static func problem(_ text: String) -> ConfigError {
    ConfigError(variable: "ADMIN_TOKENS", problem: text)
  }
}
