/// An app's version as it reports it (`CFBundleShortVersionString`, Android's `versionName`):
/// 1 to 4 dot-separated numbers, compared number by number, a missing one counting as 0
/// (`2.0` equals `2.0.0`).
package struct AppVersion: Sendable, Comparable, CustomStringConvertible {
  /// Without trailing zeros, for comparing.
  let parts: [UInt32]
  /// As written, for showing back.
  package let description: String

  package init?(_ text: some StringProtocol) {
    let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...4).contains(pieces.count) else { return nil }
    var parts: [UInt32] = []
    for piece in pieces {
      guard (1...9).contains(piece.utf8.count),
        piece.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
        let value = UInt32(piece)
      else { return nil }
      parts.append(value)
    }
    while parts.count > 1 && parts.last == 0 { parts.removeLast() }
    self.parts = parts
    description = String(text)
  }

  package static func < (lhs: AppVersion, rhs: AppVersion) -> Bool {
    for index in 0..<max(lhs.parts.count, rhs.parts.count) {
      let left = index < lhs.parts.count ? lhs.parts[index] : 0
      let right = index < rhs.parts.count ? rhs.parts[index] : 0
      if left != right { return left < right }
    }
    return false
  }

  package static func == (lhs: AppVersion, rhs: AppVersion) -> Bool { !(lhs < rhs || rhs < lhs) }
}
