import COpenSSL

extension FakeCertificateAuthority {
  /// A PKCS#7 signedData (DER) wrapping `content`, signed by the leaf as Apple's receipt
  /// signing certificate signs app receipts: leaf, intermediate and root included, as Apple
  /// ships them.
  func signPKCS7(_ content: [UInt8]) throws -> [UInt8] {
    // The BIO reads `content` in place during PKCS7_sign, so signing happens while the buffer
    // is lent out; a pointer kept past its closure may be freed in an optimized build.
    try content.withUnsafeBytes { try sign($0) }
  }

  private func sign(_ content: UnsafeRawBufferPointer) throws -> [UInt8] {
    guard let base = content.baseAddress, let bio = BIO_new_mem_buf(base, Int32(content.count))
    else { throw FakeCryptoError("BIO_new_mem_buf") }
    defer { BIO_free(bio) }
    guard let chain = OPENSSL_sk_new_null() else { throw FakeCryptoError("sk_new_null") }
    defer { OPENSSL_sk_free(chain) }
    for certificate in [intermediate, root]
    where OPENSSL_sk_push(chain, UnsafeRawPointer(certificate.pointer)) <= 0 {
      throw FakeCryptoError("sk_push")
    }
    guard
      let signed = PKCS7_sign(
        leaf.pointer, leafKey.pointer, chain, bio, PKCS7_BINARY)
    else {
      ERR_clear_error()
      throw FakeCryptoError("PKCS7_sign")
    }
    defer { PKCS7_free(signed) }
    let length = i2d_PKCS7(signed, nil)
    guard length > 0 else { throw FakeCryptoError("i2d_PKCS7") }
    var der = [UInt8](repeating: 0, count: Int(length))
    let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
      var cursor = buffer.baseAddress
      return i2d_PKCS7(signed, &cursor)
    }
    guard written == length else { throw FakeCryptoError("i2d_PKCS7") }
    return der
  }
}
