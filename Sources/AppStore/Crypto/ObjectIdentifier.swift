import COpenSSL

/// An ASN.1 object identifier parsed once by OpenSSL.
final class ASN1ObjectIdentifier: @unchecked Sendable {
  // Immutable after init; OpenSSL only reads it.
  let pointer: OpaquePointer

  init?(dotted: String) {
    guard let object = OBJ_txt2obj(dotted, 1) else {
      ERR_clear_error()
      return nil
    }
    pointer = object
  }

  deinit { ASN1_OBJECT_free(pointer) }

  /// Apple's marker on the WWDR intermediate that may sign App Store receipts.
  static let appleIntermediate = ASN1ObjectIdentifier(dotted: "1.2.840.113635.100.6.2.1")
  /// Apple's marker on the leaf that signs App Store receipts and transactions.
  static let appleLeaf = ASN1ObjectIdentifier(dotted: "1.2.840.113635.100.6.11.1")
}
