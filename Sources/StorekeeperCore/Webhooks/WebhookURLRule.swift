import Foundation

/// What a webhook URL may be, exactly as openapi.yaml's `WebhookURL` pattern says: `https://`
/// (or `http://` under `ALLOW_INSECURE_URLS=1`, the project's rule for every outbound URL), a
/// host name or IPv4 address, an optional port (1–65535) and path; no credentials (`user@`), no
/// fragment, no percent-escapes, at most 2,048 bytes.
package enum WebhookURLRule {
  package static let maxLength = 2048

  /// Why `text` is refused, or nil.
  package static func problem(_ text: String, allowInsecure: Bool) -> String? {
    let shape =
      "must be an https URL with a host, optional port and path, without credentials or fragment"
    guard text.utf8.count <= maxLength else { return "must be at most \(maxLength) bytes" }
    let rest: Substring
    if text.hasPrefix("https://") {
      rest = text.dropFirst(8)
    } else if text.hasPrefix("http://") {
      guard allowInsecure else {
        return "must be an https URL (ALLOW_INSECURE_URLS=1 allows http)"
      }
      rest = text.dropFirst(7)
    } else {
      return shape
    }
    let authority = rest.prefix { $0 != "/" }
    let path = rest.dropFirst(authority.count)
    let hostPart = authority.prefix { $0 != ":" }
    let port = authority.dropFirst(hostPart.count)
    guard isHost(hostPart.utf8), isPort(port.utf8), path.utf8.allSatisfy(isPathByte),
      URL(string: text)?.host != nil
    else { return shape }
    return nil
  }

  private static func isAlphanumeric(_ byte: UInt8) -> Bool {
    (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
  }

  private static func isHost(_ host: Substring.UTF8View) -> Bool {
    guard let first = host.first, let last = host.last, host.count <= 253,
      isAlphanumeric(first), isAlphanumeric(last)
    else { return false }
    return host.allSatisfy {
      isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
    }
  }

  /// Empty, or `:` and a TCP port, 1–65535, without a leading zero (as the pattern says, which
  /// cannot compare numbers): five digits alone would let `:0` or `:99999` through, an endpoint
  /// no attempt can ever reach.
  private static func isPort(_ port: Substring.UTF8View) -> Bool {
    guard let colon = port.first else { return true }
    let digits = port.dropFirst()
    guard colon == UInt8(ascii: ":"), (1...5).contains(digits.count),
      digits.first != UInt8(ascii: "0"),
      digits.allSatisfy({ (48...57).contains($0) }), let value = Int(Substring(digits))
    else { return false }
    return (1...65535).contains(value)
  }

  private static let pathPunctuation = Set("._~!$&'()*+,;=:/?-".utf8)

  private static func isPathByte(_ byte: UInt8) -> Bool {
    isAlphanumeric(byte) || pathPunctuation.contains(byte)
  }
}
