import StorekeeperCore

extension AdminToken {
  /// Parses `METRICS_TOKEN`: a token of at least 16 characters kept as written, or `sha256:HEX`
  /// (64 hex digits) so that the environment never holds it. It reads `/metrics` and nothing
  /// else, so it is kept apart from `ADMIN_TOKENS` and has no name or scope of its own.
  /// Whitespace around it (a secret file's trailing newline) is dropped, as a presented token
  /// never carries it.
  package static func parseMetricsToken(_ raw: String) throws -> AdminToken {
    let problem = { (detail: String) in ConfigError(variable: "METRICS_TOKEN", problem: detail) }
    let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !containsControl(text) else { throw problem("must not contain control characters") }
    if text.hasPrefix("sha256:") {
      guard let digest = hexBytes(String(text.dropFirst(7))), digest.count == 32 else {
        throw problem("sha256: must be followed by 64 hexadecimal digits")
      }
      return AdminToken(name: "metrics", credential: .sha256(digest), scope: .read)
    }
    guard text.count >= minimumLength else {
      throw problem("must be at least \(minimumLength) characters (or sha256:HEX)")
    }
    guard !text.contains(where: { $0 == " " || $0 == "," }) else {
      throw problem("must not contain spaces or commas")
    }
    return AdminToken(name: "metrics", token: text, scope: .read)
  }
}
