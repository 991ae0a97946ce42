/// Just enough DER to write an app receipt's payload as Apple lays it out.
enum FakeDER {
  static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
    [tag] + length(content.count) + content
  }

  static func length(_ count: Int) -> [UInt8] {
    guard count >= 0x80 else { return [UInt8(count)] }
    var bytes: [UInt8] = []
    var rest = count
    while rest > 0 {
      bytes.insert(UInt8(rest & 0xFF), at: 0)
      rest >>= 8
    }
    return [0x80 | UInt8(bytes.count)] + bytes
  }

  static func integer(_ value: Int64) -> [UInt8] {
    var bytes: [UInt8] = []
    var rest = value
    repeat {
      bytes.insert(UInt8(rest & 0xFF), at: 0)
      rest >>= 8
    } while rest > 0
    if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
    return element(0x02, bytes)
  }

  static func utf8String(_ text: String) -> [UInt8] { element(0x0C, Array(text.utf8)) }
  static func ia5String(_ text: String) -> [UInt8] { element(0x16, Array(text.utf8)) }
  static func octetString(_ bytes: [UInt8]) -> [UInt8] { element(0x04, bytes) }
  static func sequence(_ parts: [[UInt8]]) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }

  /// A SET OF, its members sorted as DER requires.
  static func set(_ members: [[UInt8]]) -> [UInt8] {
    element(0x31, members.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
  }

  /// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
  static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] {
    sequence([integer(type), integer(1), octetString(value)])
  }
}
