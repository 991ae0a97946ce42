extension TrustStore {
  /// The certificates of `anchorPEM` (one of Apple's embedded roots) and of each extra PEM
  /// (`APPLE_ROOT_CERTS`, e.g. the fake App Store's root); throws naming the first extra that
  /// holds no readable certificate.
  convenience init(anchorPEM: String, extraPEMs: [String]) throws {
    var roots = PEM.certificatesDER(in: anchorPEM).compactMap(X509Certificate.init(der:))
    for (index, pem) in extraPEMs.enumerated() {
      let ders = PEM.certificatesDER(in: pem)
      guard !ders.isEmpty else {
        throw AppStoreConfigurationError.invalidRootCertificate(index: index)
      }
      for der in ders {
        guard let certificate = X509Certificate(der: der) else {
          throw AppStoreConfigurationError.invalidRootCertificate(index: index)
        }
        roots.append(certificate)
      }
    }
    try self.init(roots: roots)
  }
}
