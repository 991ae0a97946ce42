import COpenSSL

extension TrustStore {
  /// The chain `X509_verify_cert` builds from `leaf` to one of the trusted roots, with
  /// `untrusted` as the only helpers and the clock set to `seconds` instead of now; leaf
  /// first, each certificate a copy of its own.
  func verifiedChain(leaf: X509Certificate, untrusted: [X509Certificate], at seconds: Int64)
    -> Result<[X509Certificate], ChainVerifier.Failure>
  {
    guard let context = X509_STORE_CTX_new() else { return .failure(.invalidCertificate) }
    defer { X509_STORE_CTX_free(context) }
    guard let helpers = OPENSSL_sk_new_null() else { return .failure(.invalidCertificate) }
    defer { OPENSSL_sk_free(helpers) }
    for certificate in untrusted
    where OPENSSL_sk_push(helpers, UnsafeRawPointer(certificate.pointer)) <= 0 {
      return .failure(.invalidCertificate)
    }
    guard X509_STORE_CTX_init(context, store, leaf.pointer, helpers) == 1,
      let parameters = X509_STORE_CTX_get0_param(context)
    else {
      ERR_clear_error()
      return .failure(.invalidCertificate)
    }
    X509_VERIFY_PARAM_set_time(parameters, time_t(seconds))
    guard X509_verify_cert(context) == 1 else {
      let code = X509_STORE_CTX_get_error(context)
      ERR_clear_error()
      return .failure(ChainVerifier.failure(forVerifyError: code))
    }
    guard let built = X509_STORE_CTX_get0_chain(context) else {
      return .failure(.invalidCertificate)
    }
    var chain: [X509Certificate] = []
    for index in 0..<OPENSSL_sk_num(built) {
      guard let raw = OPENSSL_sk_value(built, index),
        let certificate = X509Certificate(copying: OpaquePointer(raw))
      else { return .failure(.invalidCertificate) }
      chain.append(certificate)
    }
    // Only the configured roots are in the store, so the last is one of them; say so anyway.
    guard let last = chain.last, isTrusted(rootDER: last.der) else {
      return .failure(.untrustedRoot)
    }
    return .success(chain)
  }
}
