import AppStore
import JOSE
import Testing

@Suite struct ECDSASignatureTests {
  @Test func rawAndDERRoundTripIncludingHighBitsAndLeadingZeros() throws {
    var raw = [UInt8](repeating: 0, count: 64)
    raw[0] = 0x00
    raw[1] = 0x85  // r: leading zero byte, then a high bit → needs a 0x00 pad after trimming
    for index in 2..<64 { raw[index] = UInt8(index) }
    raw[32] = 0xFF  // s: high bit set
    let der = try #require(ECDSASignature.der(fromRaw: raw))
    #expect(der[0] == 0x30)
    #expect(ECDSASignature.raw(fromDER: der) == raw)
  }

  @Test func refusesWrongSizes() {
    #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 1, count: 63)) == nil)
    #expect(ECDSASignature.raw(fromDER: [0x30, 0x03, 0x02, 0x01]) == nil)
  }

  @Test func base64URLIsStrict() {
    #expect(Base64URL.decode(Substring("AQ")) == [1])
    #expect(Base64URL.decode(Substring("AR")) == nil)  // non-zero unused bits
    #expect(Base64URL.decode(Substring("AQ==")) == nil)  // JWS segments carry no padding
    #expect(Base64URL.decode(Substring("A+")) == nil)  // not the url-safe alphabet
    #expect(Base64URL.decode(Substring("_-8")) == [0xFF, 0xEF])
    #expect(Base64URL.encode([0xFF, 0xEF]) == "_-8")
  }
}
