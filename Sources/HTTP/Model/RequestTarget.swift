/// Splits a request-target into a decoded path and query parameters.
struct RequestTarget {
  var path: String
  var query: [String: String]

  init(_ target: String) {
    query = [:]
    // Fast path, the common case: origin-form with nothing to decode or split.
    let plain = target.withUTF8Bytes { bytes in
      bytes.first == UInt8(ascii: "/")
        && !bytes.contains(where: {
          $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "#")
        })
    }
    if plain {
      path = target
      return
    }
    let utf8 = target.utf8
    let raw = Self.rawPath(of: target)
    path = PercentDecoding.decode(raw, plusAsSpace: false) ?? String(raw)
    guard let mark = utf8.firstIndex(of: UInt8(ascii: "?")) else { return }
    var rest = target[utf8.index(after: mark)...]
    if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
    // One pass over the bytes, `&` between pairs and the first `=` in each: apps send a
    // query with every offering request, and two `split`s cost an array each per pair.
    let bytes = rest.utf8
    var pairStart = bytes.startIndex
    var equals: String.Index?
    var i = bytes.startIndex
    while true {
      let atEnd = i == bytes.endIndex
      if atEnd || bytes[i] == UInt8(ascii: "&") {
        if pairStart != i {
          let key = rest[pairStart..<(equals ?? i)]
          let value = equals.map { rest[bytes.index(after: $0)..<i] } ?? ""
          add(key, value)
        }
        if atEnd { break }
        pairStart = bytes.index(after: i)
        equals = nil
      } else if equals == nil && bytes[i] == UInt8(ascii: "=") {
        equals = i
      }
      i = bytes.index(after: i)
    }
  }

  /// The first value of a key wins.
  private mutating func add(_ rawKey: Substring, _ rawValue: Substring) {
    let key = PercentDecoding.decode(rawKey, plusAsSpace: true) ?? String(rawKey)
    guard query[key] == nil else { return }
    query[key] = PercentDecoding.decode(rawValue, plusAsSpace: true) ?? String(rawValue)
  }

  /// The path part of an origin-form or absolute-form target, still encoded.
  static func rawPath(of target: String) -> Substring {
    let utf8 = target.utf8
    var start = utf8.startIndex
    if utf8.first != UInt8(ascii: "/") {
      // absolute-form: skip "scheme://authority".
      guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return target[...] }
      var i = utf8.index(after: colon)
      for _ in 0..<2 where i != utf8.endIndex && utf8[i] == UInt8(ascii: "/") {
        i = utf8.index(after: i)
      }
      guard let slash = utf8[i...].firstIndex(of: UInt8(ascii: "/")) else { return "/" }
      start = slash
    }
    let end =
      utf8[start...].firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
      ?? utf8.endIndex
    return target[start..<end]
  }
}

enum PercentDecoding {
  /// Decodes `%XX` escapes (and `+` when asked). Returns nil on a malformed escape or when the
  /// result is not UTF-8, so callers can fall back to the raw text.
  static func decode(_ text: Substring, plusAsSpace: Bool) -> String? {
    let utf8 = text.utf8
    if !utf8.contains(UInt8(ascii: "%")) && !(plusAsSpace && utf8.contains(UInt8(ascii: "+"))) {
      return String(text)
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(utf8.count)
    var i = utf8.startIndex
    while i != utf8.endIndex {
      let byte = utf8[i]
      if byte == UInt8(ascii: "%") {
        let h = utf8.index(after: i)
        guard h != utf8.endIndex else { return nil }
        let l = utf8.index(after: h)
        guard l != utf8.endIndex, let hi = hex(utf8[h]), let lo = hex(utf8[l]) else { return nil }
        bytes.append(hi << 4 | lo)
        i = utf8.index(after: l)
        continue
      }
      bytes.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
      i = utf8.index(after: i)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hex(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
