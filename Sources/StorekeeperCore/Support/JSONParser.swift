import TextSafety

/// A strict RFC 8259 parser from bytes to `JSONValue`, for request bodies.
///
/// Foundation's `JSONDecoder` into an enum of every JSON kind costs a thrown error per kind it
/// tries; reading bytes once is several times cheaper on the hot path (orders, reports). It is
/// also stricter where a lenient parser would let two readers of one body disagree: duplicate
/// keys, lone surrogates, invalid UTF-8 and trailing bytes are refused, and nesting is bounded
/// before it can exhaust a stack. Numbers keep their literal text, so no value passes through
/// floating point.
package struct JSONParser {
  package enum Failure: Error, Equatable {
    case invalid(offset: Int)
    case tooDeep
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private let maxDepth: Int
  private var index = 0
  private var depth = 0

  private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
    self.bytes = bytes
    self.maxDepth = maxDepth
  }

  package static func parse(_ input: [UInt8], maxDepth: Int) throws(Failure) -> JSONValue {
    let result: Result<JSONValue, Failure> = input.withUnsafeBufferPointer { buffer in
      var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
      do throws(Failure) {
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == buffer.count else { throw .invalid(offset: parser.index) }
        return .success(value)
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  private var failure: Failure { .invalid(offset: index) }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  private mutating func value() throws(Failure) -> JSONValue {
    skipWhitespace()
    guard index < bytes.count else { throw failure }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try object()
    case UInt8(ascii: "["): return try array()
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
    default: throw failure
    }
  }

  private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(Failure)
    -> JSONValue
  {
    let count = word.utf8CodeUnitCount
    guard bytes.count - index >= count else { throw failure }
    for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
      throw failure
    }
    index += count
    return value
  }

  private mutating func enter() throws(Failure) {
    depth += 1
    guard depth <= maxDepth else { throw .tooDeep }
    index += 1
  }

  private mutating func object() throws(Failure) -> JSONValue {
    try enter()
    var members: [String: JSONValue] = [:]
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      depth -= 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure }
      let keyOffset = index
      let key = try string()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure }
      index += 1
      let member = try value()
      guard members.updateValue(member, forKey: key) == nil else {
        throw .invalid(offset: keyOffset)
      }
      skipWhitespace()
      guard index < bytes.count else { throw failure }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "}") else { throw failure }
      index += 1
      depth -= 1
      return .object(members)
    }
  }

  private mutating func array() throws(Failure) -> JSONValue {
    try enter()
    var elements: [JSONValue] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      depth -= 1
      return .array(elements)
    }
    while true {
      elements.append(try value())
      skipWhitespace()
      guard index < bytes.count else { throw failure }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "]") else { throw failure }
      index += 1
      depth -= 1
      return .array(elements)
    }
  }

  /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, returned as written.
  private mutating func number() throws(Failure) -> String {
    let start = index
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard index < bytes.count, isDigit(bytes[index]) else { throw failure }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
    } else {
      skipDigits()
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard index < bytes.count, isDigit(bytes[index]) else { throw failure }
      skipDigits()
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard index < bytes.count, isDigit(bytes[index]) else { throw failure }
      skipDigits()
    }
    return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
  }

  private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

  private mutating func skipDigits() {
    while index < bytes.count, isDigit(bytes[index]) { index += 1 }
  }

  private mutating func string() throws(Failure) -> String {
    index += 1
    let start = index
    // Fast path: no escapes, so the bytes between the quotes are the string.
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        return try text(UnsafeBufferPointer(rebasing: bytes[start..<index]), end: index + 1)
      }
      if byte == UInt8(ascii: "\\") { break }
      guard byte >= 0x20 else { throw failure }
      index += 1
    }
    var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return try out.withUnsafeBufferPointer { buffer throws(Failure) in
          try text(buffer, end: index)
        }
      case UInt8(ascii: "\\"):
        index += 1
        guard index < bytes.count else { throw failure }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"): out.append(contentsOf: try unicodeEscape())
        default: throw .invalid(offset: index - 1)
        }
      default:
        guard byte >= 0x20 else { throw failure }
        out.append(byte)
        index += 1
      }
    }
    throw failure
  }

  /// The UTF-8 of a `\uXXXX` escape (after the `u`), pairing surrogates; a lone one is refused.
  private mutating func unicodeEscape() throws(Failure) -> [UInt8] {
    let high = try hex4()
    var scalarValue = high
    if (0xD800...0xDBFF).contains(high) {
      guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
        bytes[index + 1] == UInt8(ascii: "u")
      else { throw failure }
      index += 2
      let low = try hex4()
      guard (0xDC00...0xDFFF).contains(low) else { throw failure }
      scalarValue = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
    } else if (0xDC00...0xDFFF).contains(high) {
      throw failure
    }
    guard let scalar = Unicode.Scalar(scalarValue) else { throw failure }
    return Array(String(Character(scalar)).utf8)
  }

  private mutating func hex4() throws(Failure) -> UInt32 {
    guard bytes.count - index >= 4 else { throw failure }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default: throw failure
      }
      value = value << 4 | digit
      index += 1
    }
    return value
  }

  /// Bytes that must be valid UTF-8 to become a string.
  private mutating func text(_ utf8: UnsafeBufferPointer<UInt8>, end: Int) throws(Failure) -> String
  {
    // Stream-safe, so no key or value costs quadratic time when hashed or compared.
    guard let text = String(validating: utf8, as: UTF8.self), StreamSafeText.isStreamSafe(text)
    else { throw failure }
    index = end
    return text
  }
}
