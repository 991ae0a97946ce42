/// The app's id for a user: its account id or a guest id it made (`guest:<uuid>`).
///
/// User ids are opaque: compared byte for byte, never normalised. PostgreSQL compares `text`
/// by its bytes (deterministic collations), but Swift's `String ==` and `String` hashing follow
/// Unicode canonical equivalence, so "jose\u{301}" and "jos\u{e9}" are one string to Swift and
/// two users to the database. Every comparison of user ids, and every dictionary or set keyed by
/// them, goes through `same` or `key`, so the edge agrees with the rows it guards. Ids are not
/// refused for being unnormalised or holding invisible characters either: an app's existing
/// ids may take any form, and refusing one would lock its user out.
package enum UserId {
  /// 1–128 characters, none of them a control character.
  package static func isValid(_ id: String) -> Bool {
    // Most ids are ASCII: checked byte by byte without decoding scalars (the offerings route
    // checks the id it is named on every request).
    let ascii = id.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
      guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
      return bytes.count >= 1 && bytes.count <= 128
        && bytes.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
    }
    if let ascii = ascii ?? nil { return ascii }
    let count = id.unicodeScalars.count
    return count >= 1 && count <= 128
      && id.unicodeScalars.allSatisfy {
        $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value)
      }
  }

  /// Whether two ids name the same user, as PostgreSQL decides it: byte for byte. A missing id
  /// is no one's.
  package static func same(_ lhs: String?, _ rhs: String?) -> Bool {
    guard let lhs, let rhs else { return false }
    return lhs.utf8.elementsEqual(rhs.utf8)
  }

  /// Whether a caller confined to `acting` (nil: a trusted caller, acting for anyone) may act
  /// for `owner`.
  package static func may(_ acting: String?, actFor owner: String) -> Bool {
    acting == nil || same(acting, owner)
  }

  /// A dictionary key for the id, equal to another id's key exactly when their bytes are equal.
  /// Swift compares ASCII-only strings byte for byte (ASCII has no canonical equivalents), so an
  /// ASCII id without `%` is its own key, and anything else has every other byte
  /// percent-escaped.
  package static func key(_ id: String) -> String {
    let percent = UInt8(ascii: "%")
    if id.utf8.allSatisfy({ $0 < 0x80 && $0 != percent }) { return id }
    var escaped: [UInt8] = []
    escaped.reserveCapacity(id.utf8.count * 3)
    let hex = Array("0123456789ABCDEF".utf8)
    for byte in id.utf8 {
      if byte < 0x80 && byte != percent {
        escaped.append(byte)
      } else {
        escaped += [percent, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
      }
    }
    return String(decoding: escaped, as: UTF8.self)
  }
}
