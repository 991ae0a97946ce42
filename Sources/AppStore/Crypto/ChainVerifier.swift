import COpenSSL

/// Verifies a leaf → intermediate → root chain against the trusted roots at a given time.
struct ChainVerifier: Sendable {
  enum Failure: Error, Equatable {
    case untrustedRoot, invalidCertificate, expired, missingIntermediateOID, missingLeafOID
  }

  /// A chain that passed, with the span (seconds) in which all three certificates are valid.
  struct Verified: Sendable {
    var leafKey: PublicKey
    var validFrom: Int64
    var validUntil: Int64
  }

  let trust: TrustStore

  func verify(
    leaf: X509Certificate, intermediate: X509Certificate, root: X509Certificate, at seconds: Int64
  ) -> Result<Verified, Failure> {
    guard trust.isTrusted(rootDER: root.der) else { return .failure(.untrustedRoot) }
    guard intermediate.hasExtension(.appleIntermediate) else {
      return .failure(.missingIntermediateOID)
    }
    guard leaf.hasExtension(.appleLeaf) else { return .failure(.missingLeafOID) }
    if let failure = runOpenSSL(leaf: leaf, intermediate: intermediate, root: root, at: seconds) {
      return .failure(failure)
    }
    guard let key = leaf.p256PublicKey() else { return .failure(.invalidCertificate) }
    let certificates = [leaf, intermediate, root]
    let starts = certificates.compactMap(\.notBefore)
    let ends = certificates.compactMap(\.notAfter)
    guard starts.count == 3, ends.count == 3, let from = starts.max(), let until = ends.min() else {
      return .failure(.invalidCertificate)
    }
    return .success(Verified(leafKey: key, validFrom: from, validUntil: until))
  }

  /// X509_verify_cert with only the trusted roots in the store, the intermediate as the one
  /// untrusted helper, and the clock set to `seconds` instead of now.
  private func runOpenSSL(
    leaf: X509Certificate, intermediate: X509Certificate, root: X509Certificate, at seconds: Int64
  ) -> Failure? {
    guard let context = X509_STORE_CTX_new() else { return .invalidCertificate }
    defer { X509_STORE_CTX_free(context) }
    guard let untrusted = OPENSSL_sk_new_null() else { return .invalidCertificate }
    defer { OPENSSL_sk_free(untrusted) }
    guard OPENSSL_sk_push(untrusted, UnsafeRawPointer(intermediate.pointer)) > 0,
      X509_STORE_CTX_init(context, trust.store, leaf.pointer, untrusted) == 1,
      let parameters = X509_STORE_CTX_get0_param(context)
    else {
      ERR_clear_error()
      return .invalidCertificate
    }
    X509_VERIFY_PARAM_set_time(parameters, time_t(seconds))
    guard X509_verify_cert(context) == 1 else {
      let code = X509_STORE_CTX_get_error(context)
      ERR_clear_error()
      return Self.failure(forVerifyError: code)
    }
    // The chain OpenSSL built must be exactly the one the token presented.
    guard let chain = X509_STORE_CTX_get0_chain(context), OPENSSL_sk_num(chain) == 3,
      let second = OPENSSL_sk_value(chain, 1), let third = OPENSSL_sk_value(chain, 2),
      intermediate.isSameCertificate(as: OpaquePointer(second)),
      root.isSameCertificate(as: OpaquePointer(third))
    else { return .untrustedRoot }
    return nil
  }

  static func failure(forVerifyError code: Int32) -> Failure {
    switch code {
    case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID: .expired
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
      X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      .untrustedRoot
    default: .invalidCertificate
    }
  }
}

extension ChainVerifier.Failure {
  var reason: RefusalReason {
    switch self {
    case .untrustedRoot: .untrustedRoot
    case .invalidCertificate: .invalidCertificate
    case .expired: .certificateExpired
    case .missingIntermediateOID: .missingIntermediateOID
    case .missingLeafOID: .missingLeafOID
    }
  }
}
