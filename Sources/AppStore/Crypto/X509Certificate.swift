import COpenSSL

#if canImport(Glibc)
  import Glibc
#endif

/// A parsed X.509 certificate and the exact DER it came from.
final class X509Certificate: @unchecked Sendable {
  // Immutable after init; shared read-only between threads.
  let pointer: OpaquePointer
  let der: [UInt8]

  /// Parses DER; refuses trailing bytes so that two different inputs never yield one certificate.
  init?(der: [UInt8]) {
    let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
      guard let base = buffer.baseAddress else { return nil }
      var cursor: UnsafePointer<UInt8>? = base
      guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
      guard let end = cursor, end - base == buffer.count else {
        X509_free(certificate)
        return nil
      }
      return certificate
    }
    guard let parsed else {
      ERR_clear_error()
      return nil
    }
    self.pointer = parsed
    self.der = der
  }

  deinit { X509_free(pointer) }

  func hasExtension(_ oid: ASN1ObjectIdentifier?) -> Bool {
    guard let oid else { return false }
    return X509_get_ext_by_OBJ(pointer, oid.pointer, -1) >= 0
  }

  /// Seconds since the epoch from which the certificate is valid.
  var notBefore: Int64? { Self.seconds(X509_get0_notBefore(pointer)) }
  /// Seconds since the epoch until which the certificate is valid.
  var notAfter: Int64? { Self.seconds(X509_get0_notAfter(pointer)) }

  /// The subject's key, when it is an EC P-256 key (the only kind ES256 allows).
  func p256PublicKey() -> PublicKey? {
    guard let key = X509_get_pubkey(pointer) else {
      ERR_clear_error()
      return nil
    }
    let publicKey = PublicKey(owning: key)
    return publicKey.isP256 ? publicKey : nil
  }

  private static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
    guard let time else { return nil }
    var parts = tm()
    guard ASN1_TIME_to_tm(time, &parts) == 1 else {
      ERR_clear_error()
      return nil
    }
    return Int64(timegm(&parts))
  }
}
