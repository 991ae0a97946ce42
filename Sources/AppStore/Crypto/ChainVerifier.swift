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

  /// The chain OpenSSL builds must be exactly the one the token presented.
  private func runOpenSSL(
    leaf: X509Certificate, intermediate: X509Certificate, root: X509Certificate, at seconds: Int64
  ) -> Failure? {
    switch trust.verifiedChain(leaf: leaf, untrusted: [intermediate], at: seconds) {
    case .failure(let failure): return failure
    case .success(let chain):
      guard chain.count == 3, chain[1].der == intermediate.der, chain[2].der == root.der else {
        return .untrustedRoot
      }
      return nil
    }
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
