import COpenSSL

extension X509Certificate {
  /// A certificate of its own, re-read from the DER of one that OpenSSL holds elsewhere (in a
  /// PKCS#7 container, in a chain it built), so its lifetime is this object's alone.
  convenience init?(copying certificate: OpaquePointer) {
    let length = i2d_X509(certificate, nil)
    guard length > 0 else {
      ERR_clear_error()
      return nil
    }
    var der = [UInt8](repeating: 0, count: Int(length))
    let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
      var cursor = buffer.baseAddress
      return i2d_X509(certificate, &cursor)
    }
    guard written == length else { return nil }
    self.init(der: der)
  }
}
