import Glibc

/// An address or a CIDR block (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`) for `TRUSTED_PROXIES`.
/// IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) count as the IPv4 address they carry.
package struct IPNetwork: Sendable, Equatable {
  let bytes: [UInt8]
  package let prefixLength: Int

  init?(_ text: String) {
    let parts = text.trimmingSpaces.split(separator: "/", maxSplits: 1)
    guard let first = parts.first, let address = Self.address(String(first)) else { return nil }
    let maxPrefix = address.count * 8
    var prefix = maxPrefix
    if parts.count == 2 {
      guard let value = Int(parts[1]), (0...maxPrefix).contains(value) else { return nil }
      prefix = value
    }
    bytes = address
    prefixLength = prefix
  }

  func contains(_ address: [UInt8]) -> Bool {
    guard address.count == bytes.count else { return false }
    var left = prefixLength
    for (a, b) in zip(address, bytes) where left > 0 {
      let bits = min(8, left)
      let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
      if a & mask != b & mask { return false }
      left -= bits
    }
    return true
  }

  /// The 4 or 16 bytes of an address as text (brackets allowed around IPv6), nil if it is not one.
  static func address(_ text: String) -> [UInt8]? {
    var text = text.trimmingSpaces
    if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 {
      return withUnsafeBytes(of: &v4) { Array($0) }
    }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
    let bytes = withUnsafeBytes(of: &v6) { Array($0) }
    if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
      return Array(bytes[12..<16])
    }
    return bytes
  }
}

extension String {
  fileprivate var trimmingSpaces: String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
  }
}
