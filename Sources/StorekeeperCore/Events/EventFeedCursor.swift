import Foundation

/// Where a reader of the feed stands: the (inserting transaction, position) of the last event
/// it read. Opaque to clients (base64url of `v1:<xid>:<position>`), so the order it encodes can
/// change without breaking anyone who only hands it back.
package struct EventFeedCursor: Sendable, Equatable {
  var xid: UInt64
  var position: Int64

  struct Malformed: Error {}

  package var text: String {
    Data("v1:\(xid):\(position)".utf8).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// nil for anything this feed did not hand out (or could not have).
  package init?(text: String) {
    guard (1...64).contains(text.utf8.count),
      text.utf8.allSatisfy({ Self.alphabet.contains($0) })
    else { return nil }
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(
      of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
    guard let data = Data(base64Encoded: base64),
      let decoded = String(data: data, encoding: .utf8)
    else { return nil }
    let parts = decoded.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0] == "v1",
      parts[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
      parts[2].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
      let xid = UInt64(parts[1]), let position = Int64(parts[2]),
      xid <= UInt64(Int64.max)
    else { return nil }
    self.init(xid: xid, position: position)
  }

  init(xid: UInt64, position: Int64) {
    self.xid = xid
    self.position = position
  }

  private static let alphabet = Set(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}
