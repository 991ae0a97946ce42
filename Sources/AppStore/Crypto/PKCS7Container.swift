import COpenSSL

/// A PKCS#7 signedData container read from a client's bytes, owned by this object: the
/// content it wraps, the certificates it carries and its one signature.
final class PKCS7Container {
  /// Certificates a container may carry; Apple's receipts carry three.
  static let maximumCertificates = 8

  private let pointer: UnsafeMutablePointer<PKCS7>
  /// The signed bytes (`content.d.sign.contents.d.data`).
  let content: [UInt8]

  /// Nil unless `der` is exactly one DER PKCS#7 signedData wrapping non-empty data.
  init?(der: [UInt8]) {
    let parsed = der.withUnsafeBufferPointer { buffer -> UnsafeMutablePointer<PKCS7>? in
      guard let base = buffer.baseAddress else { return nil }
      var cursor: UnsafePointer<UInt8>? = base
      guard let container = d2i_PKCS7(nil, &cursor, buffer.count) else { return nil }
      // Trailing bytes would let two different posts carry one signature.
      guard let end = cursor, end - base == buffer.count else {
        PKCS7_free(container)
        return nil
      }
      return container
    }
    guard let parsed else {
      ERR_clear_error()
      return nil
    }
    guard OBJ_obj2nid(parsed.pointee.type) == NID_pkcs7_signed,
      let signed = parsed.pointee.d.sign, let inner = signed.pointee.contents,
      OBJ_obj2nid(inner.pointee.type) == NID_pkcs7_data, let octets = inner.pointee.d.data,
      ASN1_STRING_length(octets) > 0, let bytes = ASN1_STRING_get0_data(octets)
    else {
      PKCS7_free(parsed)
      return nil
    }
    pointer = parsed
    content = Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(octets))))
  }

  deinit { PKCS7_free(pointer) }

  /// The certificates the container carries, in its order; nil past `maximumCertificates` or
  /// when one does not re-read.
  var certificates: [X509Certificate]? {
    guard let stack = pointer.pointee.d.sign?.pointee.cert else { return [] }
    let count = Int(OPENSSL_sk_num(stack))
    guard count <= Self.maximumCertificates else { return nil }
    var found: [X509Certificate] = []
    for index in 0..<count {
      guard let raw = OPENSSL_sk_value(stack, Int32(index)),
        let certificate = X509Certificate(copying: OpaquePointer(raw))
      else { return nil }
      found.append(certificate)
    }
    return found
  }

  /// The certificate whose key made the container's one signature over `content`, once that
  /// signature checks; nil when there is not exactly one signer, the signer's certificate is
  /// not in the container, or the signature is wrong. Says nothing of who issued the signer.
  func signer() -> X509Certificate? {
    guard let infos = PKCS7_get_signer_info(pointer), OPENSSL_sk_num(infos) == 1 else {
      return nil
    }
    // NOVERIFY: the chain is judged apart, at the receipt's own creation date. BINARY: the
    // content is bytes, not MIME text to canonicalise.
    guard PKCS7_verify(pointer, nil, nil, nil, nil, PKCS7_NOVERIFY | PKCS7_BINARY) == 1,
      let signers = PKCS7_get0_signers(pointer, nil, 0)
    else {
      ERR_clear_error()
      return nil
    }
    defer { OPENSSL_sk_free(signers) }
    guard OPENSSL_sk_num(signers) == 1, let raw = OPENSSL_sk_value(signers, 0) else { return nil }
    return X509Certificate(copying: OpaquePointer(raw))
  }
}
