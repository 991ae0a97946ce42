/// JWS spells an ES256 signature as fixed-width R‖S (RFC 7518 §3.4); OpenSSL wants DER.
enum RawECDSASignature {
  static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
    guard raw.count == 64 else { return nil }
    let r = integer(raw[0..<32])
    let s = integer(raw[32..<64])
    // At most 2 × 35 bytes: the short length form always suffices.
    return [0x30, UInt8(r.count + s.count)] + r + s
  }

  private static func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var trimmed = bytes.drop { $0 == 0 }
    if trimmed.isEmpty { trimmed = [0] }
    let body = Array(trimmed)
    let padded = body[0] & 0x80 != 0 ? [0] + body : body
    return [0x02, UInt8(padded.count)] + padded
  }
}
