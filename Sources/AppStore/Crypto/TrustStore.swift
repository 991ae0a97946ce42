import COpenSSL

/// The configured roots, and an `X509_STORE` that holds only them.
final class TrustStore: @unchecked Sendable {
  // X509_STORE locks internally; after init it is only read by X509_verify_cert.
  let store: OpaquePointer
  let roots: [X509Certificate]

  init(roots: [X509Certificate]) throws {
    guard let store = X509_STORE_new() else {
      throw AppStoreConfigurationError.trustStoreUnavailable
    }
    self.store = store
    self.roots = roots
    for root in roots where X509_STORE_add_cert(store, root.pointer) != 1 {
      // Adding the same root twice is harmless; anything else is not.
      ERR_clear_error()
    }
  }

  deinit { X509_STORE_free(store) }

  /// Whether `der` is byte for byte one of the trusted roots.
  func isTrusted(rootDER der: [UInt8]) -> Bool {
    roots.contains { $0.der == der }
  }
}
