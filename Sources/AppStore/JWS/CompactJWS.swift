import JOSE

/// A compact JWS split into its parts; nothing in it is trusted yet.
struct CompactJWS {
  /// The whole token; its prefix up to the second dot is what the signature covers.
  let bytes: [UInt8]
  let headerSegment: Range<Int>
  let signingInputLength: Int
  let payload: [UInt8]
  let signature: [UInt8]

  enum Failure: Error { case malformed }

  init(_ text: String) throws(Failure) {
    let bytes = Array(text.utf8)
    guard let first = bytes.firstIndex(of: UInt8(ascii: ".")),
      let second = bytes[(first + 1)...].firstIndex(of: UInt8(ascii: ".")),
      !bytes[(second + 1)...].contains(UInt8(ascii: ".")),
      let payload = Base64URL.decode(bytes[(first + 1)..<second]),
      // An empty signature still parses, so `alg: none` is refused for its algorithm.
      let signature = second + 1 == bytes.count ? [] : Base64URL.decode(bytes[(second + 1)...])
    else { throw .malformed }
    self.bytes = bytes
    self.headerSegment = 0..<first
    self.signingInputLength = second
    self.payload = payload
    self.signature = signature
  }

  var headerBytes: ArraySlice<UInt8> { bytes[headerSegment] }

  func withSigningInput<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<signingInputLength])) }
  }
}
