/// Splits a request-target into a decoded path and query parameters.
struct RequestTarget {
  var path: String
  var query: [String: String]

  /// Worked on the target's bytes by offset: apps send a query with every offering request,
  /// and `String.Index` arithmetic (scalar alignment on every slice) and generic `contains`
  /// over `Substring.UTF8View` cost more than the route they lead to. The delimiters are
  /// ASCII, which never occurs inside a multi-byte scalar, so every slice is whole text.
  init(_ target: String) {
    var decodedPath: String?
    var query: [String: String] = [:]
    target.withUTF8Bytes { bytes in
      // Fast path, the common case: origin-form with nothing to decode or split.
      if bytes.first == UInt8(ascii: "/")
        && !bytes.contains(where: {
          $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "#")
        })
      {
        return
      }
      decodedPath =
        Self.rawPathRange(bytes).map {
          PercentDecoding.decodeOrRaw(UnsafeBufferPointer(rebasing: bytes[$0]), plusAsSpace: false)
        } ?? "/"
      guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return }
      // Storage at once for a short query, rather than a resize on the first insert.
      query = Dictionary(minimumCapacity: 4)
      let rest = bytes[(mark + 1)...]
      let end = rest.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
      // One pass, `&` between pairs and the first `=` in each.
      var pairStart = mark + 1
      var equals: Int?
      var i = pairStart
      while true {
        let atEnd = i == end
        if atEnd || bytes[i] == UInt8(ascii: "&") {
          if pairStart != i {
            let key = UnsafeBufferPointer(rebasing: bytes[pairStart..<(equals ?? i)])
            let value = UnsafeBufferPointer(rebasing: bytes[(equals.map { $0 + 1 } ?? i)..<i])
            Self.add(key, value, to: &query)
          }
          if atEnd { break }
          pairStart = i + 1
          equals = nil
        } else if equals == nil && bytes[i] == UInt8(ascii: "=") {
          equals = i
        }
        i += 1
      }
    }
    path = decodedPath ?? target
    self.query = query
  }

  /// The first value of a key wins.
  private static func add(
    _ rawKey: UnsafeBufferPointer<UInt8>, _ rawValue: UnsafeBufferPointer<UInt8>,
    to query: inout [String: String]
  ) {
    // One hashed lookup: the slot is found once, read, and filled in place.
    Self.fillIfEmpty(&query[PercentDecoding.decodeOrRaw(rawKey, plusAsSpace: true)]) {
      PercentDecoding.decodeOrRaw(rawValue, plusAsSpace: true)
    }
  }

  private static func fillIfEmpty(_ slot: inout String?, _ value: () -> String) {
    if slot == nil { slot = value() }
  }

  /// The offsets of the path part of an origin-form or absolute-form target, still encoded;
  /// nil for an absolute-form target with no path after its authority, whose path is `/`.
  static func rawPathRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
    var start = 0
    if bytes.first != UInt8(ascii: "/") {
      // absolute-form: skip "scheme://authority".
      guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return 0..<bytes.count }
      var i = colon + 1
      for _ in 0..<2 where i != bytes.endIndex && bytes[i] == UInt8(ascii: "/") { i += 1 }
      // The authority ends at the first "/", "?" or "#" (RFC 3986, 3.2): a path read past a
      // "?" would come from the query, and a proxy that filters on paths would see another.
      guard
        let slash = bytes[i...].firstIndex(where: {
          $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
        }), bytes[slash] == UInt8(ascii: "/")
      else { return nil }
      start = slash
    }
    let end =
      bytes[start...].firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
      ?? bytes.endIndex
    return start..<end
  }
}

enum PercentDecoding {
  /// Decodes `%XX` escapes (and `+` when asked). Returns nil on a malformed escape or when the
  /// result is not UTF-8, so callers can fall back to the raw text.
  static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String? {
    if !bytes.contains(where: {
      $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+"))
    }) {
      return String(decoding: bytes, as: UTF8.self)
    }
    var decoded: [UInt8] = []
    decoded.reserveCapacity(bytes.count)
    var i = 0
    while i != bytes.count {
      let byte = bytes[i]
      if byte == UInt8(ascii: "%") {
        guard i + 2 < bytes.count, let hi = hex(bytes[i + 1]), let lo = hex(bytes[i + 2]) else {
          return nil
        }
        decoded.append(hi << 4 | lo)
        i += 3
        continue
      }
      decoded.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
      i += 1
    }
    return String(validating: decoded, as: UTF8.self)
  }

  /// The decoded text, or the raw text when it does not decode.
  static func decodeOrRaw(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String {
    decode(bytes, plusAsSpace: plusAsSpace) ?? String(decoding: bytes, as: UTF8.self)
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
