import Digest
import Foundation

/// Where a reader of the feed stands. Opaque to clients (base64url), so the order it encodes
/// can change without breaking anyone who only hands it back. Two feeds, two kinds, and each
/// reads on only in the feed that handed it out: a reader that switched would skip events, as
/// the two orders differ (`EventFeed`).
///
/// - `feed`: the whole feed's (inserting transaction, position) of the last event read,
///   `v2:<xid>:<position>`. Read with a `user_id` it reads that user's events in the whole
///   feed's order, held back like the whole feed, and hands out cursors of the same kind.
/// - `legacy`: `v1:<xid>:<position>`, what both feeds handed out before the two kinds (an
///   event's place, whichever feed read it). Read as it was then, so a poller keeps its place
///   across the upgrade: the whole feed reads on from it as from `feed`; a user's feed after
///   the sequence of the event it names when that is the user's (else after it in the whole
///   feed's order), handing out `user` cursors from then on.
/// - `user`: one user's feed, the `sequence` of the last event read, `s1:<key>:<sequence>`
///   where `key` names the user (the first 16 hex digits of the SHA-256 of their id, so a
///   cursor stays short whatever the id).
package enum EventFeedCursor: Sendable, Equatable {
  case feed(xid: UInt64, position: Int64)
  case user(key: String, sequence: Int64)
  case legacy(xid: UInt64, position: Int64)

  struct Malformed: Error {}

  /// A whole-feed cursor.
  init(xid: UInt64, position: Int64) {
    self = .feed(xid: xid, position: position)
  }

  /// The key a `user` cursor carries for `userId`.
  static func key(of userId: String) -> String {
    String(SHA256Digest.hex(userId).prefix(16))
  }

  package var text: String {
    let plain =
      switch self {
      case .feed(let xid, let position): "v2:\(xid):\(position)"
      case .legacy(let xid, let position): "v1:\(xid):\(position)"
      case .user(let key, let sequence): "s1:\(key):\(sequence)"
      }
    return Data(plain.utf8).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// Whether this cursor may be read on in the feed of `userId` (nil: the whole feed).
  package func reads(userId: String?) -> Bool {
    switch self {
    case .feed, .legacy: true
    case .user(let key, _): userId.map { Self.key(of: $0) == key } ?? false
    }
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
    guard parts.count == 3 else { return nil }
    func digits(_ part: Substring) -> Bool {
      !part.isEmpty && part.utf8.count <= 20 && part.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }
    switch parts[0] {
    case "v1", "v2":
      guard digits(parts[1]), digits(parts[2]), let xid = UInt64(parts[1]),
        let position = Int64(parts[2]), xid <= UInt64(Int64.max)
      else { return nil }
      self =
        parts[0] == "v2"
        ? .feed(xid: xid, position: position) : .legacy(xid: xid, position: position)
    case "s1":
      guard parts[1].utf8.count == 16,
        parts[1].utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }),
        digits(parts[2]), let sequence = Int64(parts[2])
      else { return nil }
      self = .user(key: String(parts[1]), sequence: sequence)
    default:
      return nil
    }
  }

  private static let alphabet = Set(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}
