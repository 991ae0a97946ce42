import COpenSSL

/// Verifies a leaf → intermediate → configured root chain at a given time.
///
/// As Apple's `SignedDataVerifier` does, the chain is built from the leaf through the token's
/// intermediate to whichever configured root signed it; the root the token presents (its last
/// `x5c` entry) is never read, so a re-issued root with the same key still verifies and a
/// presented root that is not configured gains nothing.
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

  func verify(leaf: X509Certificate, intermediate: X509Certificate, at seconds: Int64)
    -> Result<Verified, Failure>
  {
    guard intermediate.hasExtension(.appleIntermediate) else {
      return .failure(.missingIntermediateOID)
    }
    guard leaf.hasExtension(.appleLeaf) else { return .failure(.missingLeafOID) }
    let chain: [X509Certificate]
    switch runOpenSSL(leaf: leaf, intermediate: intermediate, at: seconds) {
    case .failure(let failure): return .failure(failure)
    case .success(let built): chain = built
    }
    guard let key = leaf.p256PublicKey() else { return .failure(.invalidCertificate) }
    let starts = chain.compactMap(\.notBefore)
    let ends = chain.compactMap(\.notAfter)
    guard starts.count == 3, ends.count == 3, let from = starts.max(), let until = ends.min() else {
      return .failure(.invalidCertificate)
    }
    return .success(Verified(leafKey: key, validFrom: from, validUntil: until))
  }

  /// The chain OpenSSL builds: the token's intermediate right above the leaf, then a
  /// configured root, and nothing else (Apple's PKI has exactly three levels).
  private func runOpenSSL(leaf: X509Certificate, intermediate: X509Certificate, at seconds: Int64)
    -> Result<[X509Certificate], Failure>
  {
    trust.verifiedChain(leaf: leaf, untrusted: [intermediate], at: seconds).flatMap { chain in
      guard chain.count == 3, chain[1].der == intermediate.der else {
        return .failure(.untrustedRoot)
      }
      return .success(chain)
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
