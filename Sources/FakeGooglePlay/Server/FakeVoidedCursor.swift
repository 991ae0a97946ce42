import Foundation
import JOSE

/// Where a voided purchases page ends and the query it belongs to, as an opaque token.
struct FakeVoidedCursor {
  var start: Int64
  var end: Int64
  var type: Int
  var offset: Int

  init(start: Int64, end: Int64, type: Int, offset: Int) {
    self.start = start
    self.end = end
    self.type = type
    self.offset = offset
  }

  init?(token: String) {
    guard let bytes = Base64URL.decode(token[...]) else { return nil }
    let parts = String(decoding: bytes, as: UTF8.self).split(separator: ":")
    guard parts.count == 4, let start = Int64(parts[0]), let end = Int64(parts[1]),
      let type = Int(parts[2]), let offset = Int(parts[3]), offset >= 0
    else { return nil }
    self.init(start: start, end: end, type: type, offset: offset)
  }

  var token: String { Base64URL.encode(Array("\(start):\(end):\(type):\(offset)".utf8)) }
}
