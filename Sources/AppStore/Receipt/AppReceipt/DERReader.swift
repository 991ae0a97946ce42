import COpenSSL

/// Reads DER one level at a time with OpenSSL's `ASN1_get_object`, over bytes a client sent:
/// every length is checked against the bytes that enclose it, indefinite lengths (BER, not
/// DER) are refused, and each level holds at most `limit` elements. It never recurses; callers
/// descend a fixed number of levels, so nesting depth cannot exhaust anything.
struct DERReader {
  let bytes: [UInt8]

  /// The elements that exactly fill `range`, or nil when they do not, any is malformed, or
  /// there are more than `limit`.
  func elements(in range: Range<Int>, limit: Int) -> [DERElement]? {
    guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
    return bytes.withUnsafeBufferPointer { buffer -> [DERElement]? in
      guard let base = buffer.baseAddress else { return range.isEmpty ? [] : nil }
      var found: [DERElement] = []
      var offset = range.lowerBound
      while offset < range.upperBound {
        guard found.count < limit else { return nil }
        var cursor: UnsafePointer<UInt8>? = base + offset
        var length = 0
        var tag: Int32 = 0
        var tagClass: Int32 = 0
        let flags = ASN1_get_object(
          &cursor, &length, &tag, &tagClass, range.upperBound - offset)
        // 0x80: an error (including a length past `omax`); 0x01: indefinite length.
        guard flags & 0x80 == 0, flags & 0x01 == 0, let cursor else {
          ERR_clear_error()
          return nil
        }
        let start = cursor - base
        guard length >= 0, start >= offset, length <= range.upperBound - start else { return nil }
        found.append(
          DERElement(
            tag: tag, tagClass: tagClass, constructed: flags & 0x20 != 0,
            content: start..<(start + length)))
        offset = start + length
      }
      return found
    }
  }

  /// A non-negative INTEGER's value; nil when negative or wider than 62 bits.
  func integer(_ element: DERElement) -> Int64? {
    guard element.isUniversal(DERElement.integer, constructed: false),
      !element.content.isEmpty, element.content.count <= 8
    else { return nil }
    let content = bytes[element.content]
    guard let first = content.first, first & 0x80 == 0 else { return nil }
    var value: Int64 = 0
    for byte in content {
      guard value < (1 << 54) else { return nil }
      value = value << 8 | Int64(byte)
    }
    return value
  }

  /// A UTF8String or IA5String of at most `maxLength` bytes, read from the single element
  /// that fills `range` (an attribute's OCTET STRING value).
  func string(in range: Range<Int>, maxLength: Int) -> String? {
    guard let inner = elements(in: range, limit: 1), inner.count == 1,
      inner[0].isUniversal(DERElement.utf8String, constructed: false)
        || inner[0].isUniversal(DERElement.ia5String, constructed: false),
      inner[0].content.count <= maxLength
    else { return nil }
    return String(validating: bytes[inner[0].content], as: UTF8.self)
  }

  /// An INTEGER read from the single element that fills `range`.
  func integer(in range: Range<Int>) -> Int64? {
    guard let inner = elements(in: range, limit: 1), inner.count == 1 else { return nil }
    return integer(inner[0])
  }
}
