/// Converts between JWS's fixed-width R‖S and the DER `ECDSA-Sig-Value` OpenSSL speaks.
public enum ECDSASignature {
  /// DER `SEQUENCE { INTEGER r, INTEGER s }` for a 64-byte P-256 raw signature.
  public static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
    guard raw.count == 64 else { return nil }
    let r = integer(raw[0..<32])
    let s = integer(raw[32..<64])
    // At most 2 × 35 bytes: the short length form always suffices.
    return [0x30, UInt8(r.count + s.count)] + r + s
  }

  /// 64-byte R‖S from a DER ECDSA signature over P-256, or nil when it is not one.
  public static func raw(fromDER der: [UInt8]) -> [UInt8]? {
    var index = 0
    func readLength() -> Int? {
      guard index < der.count else { return nil }
      let first = der[index]
      index += 1
      if first < 0x80 { return Int(first) }
      guard first == 0x81, index < der.count else { return nil }
      defer { index += 1 }
      return Int(der[index])
    }
    func readInteger() -> [UInt8]? {
      guard index < der.count, der[index] == 0x02 else { return nil }
      index += 1
      guard let length = readLength(), length > 0, index + length <= der.count else { return nil }
      var bytes = Array(der[index..<index + length])
      index += length
      while bytes.count > 1, bytes[0] == 0 { bytes.removeFirst() }
      guard bytes.count <= 32 else { return nil }
      return [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
    }
    guard der.first == 0x30 else { return nil }
    index = 1
    guard let total = readLength(), index + total == der.count,
      let r = readInteger(), let s = readInteger(), index == der.count
    else { return nil }
    return r + s
  }

  private static func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var trimmed = bytes.drop { $0 == 0 }
    if trimmed.isEmpty { trimmed = [0] }
    let body = Array(trimmed)
    let padded = body[0] & 0x80 != 0 ? [0] + body : body
    return [0x02, UInt8(padded.count)] + padded
  }
}
