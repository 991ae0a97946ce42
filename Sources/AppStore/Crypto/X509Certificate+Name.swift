import COpenSSL

extension X509Certificate {
  /// The subject's common name, when it has one that is UTF-8.
  var commonName: String? {
    guard let name = X509_get_subject_name(pointer) else { return nil }
    let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
    guard index >= 0, let entry = X509_NAME_get_entry(name, index),
      let value = X509_NAME_ENTRY_get_data(entry)
    else { return nil }
    var utf8: UnsafeMutablePointer<UInt8>?
    let length = ASN1_STRING_to_UTF8(&utf8, value)
    guard length >= 0, let utf8 else {
      ERR_clear_error()
      return nil
    }
    defer { CRYPTO_free(utf8, #file, #line) }
    return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
  }
}
