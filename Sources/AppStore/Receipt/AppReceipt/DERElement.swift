/// One DER tag-length-value as OpenSSL's `ASN1_get_object` reads it: where its content lies in
/// the buffer it was read from.
struct DERElement: Sendable, Equatable {
  static let integer: Int32 = 2
  static let octetString: Int32 = 4
  static let utf8String: Int32 = 12
  static let sequence: Int32 = 16
  static let set: Int32 = 17
  static let ia5String: Int32 = 22

  var tag: Int32
  /// `V_ASN1_UNIVERSAL`, `V_ASN1_CONTEXT_SPECIFIC`, …
  var tagClass: Int32
  var constructed: Bool
  var content: Range<Int>

  func isUniversal(_ tag: Int32, constructed: Bool) -> Bool {
    self.tag == tag && tagClass == 0 && self.constructed == constructed
  }
}
