import AppStore
import FakeAppStore
import Foundation

enum Fixtures {
  static let bundleId = "com.example.storekeeper"

  static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

  static func transaction(
    signedDate: Int64 = nowMilliseconds, bundleId: String = bundleId,
    environment: String = "Production",
    transactionId: String = "2000000000000001"
  ) -> JWSTransactionDecodedPayload {
    JWSTransactionDecodedPayload(
      transactionId: transactionId, originalTransactionId: transactionId, webOrderLineItemId: nil,
      bundleId: bundleId, productId: "gold.100", purchaseDate: signedDate - 1_000,
      originalPurchaseDate: signedDate - 1_000, quantity: 2, type: "Consumable",
      appAccountToken: "6F1E9A3C-2B9D-4E4B-8A77-0C1D2E3F4A5B", inAppOwnershipType: "PURCHASED",
      signedDate: signedDate, environment: environment, storefront: "USA", storefrontId: "143441",
      transactionReason: "PURCHASE", currency: "USD", price: 990)
  }

  static func configuration(
    trusting authorities: FakeCertificateAuthority...,
    environments: Set<String> = ["Production", "Sandbox"]
  ) -> AppStoreConfiguration {
    var configuration = AppStoreConfiguration(bundleId: bundleId)
    configuration.allowedEnvironments = environments
    configuration.extraRootCertificatesPEM = authorities.map(\.rootCertificatePEM)
    return configuration
  }

  static func verifier(
    trusting authorities: FakeCertificateAuthority...,
    environments: Set<String> = ["Production", "Sandbox"]
  )
    throws -> SignedDataVerifier
  {
    var configuration = AppStoreConfiguration(bundleId: bundleId)
    configuration.allowedEnvironments = environments
    configuration.extraRootCertificatesPEM = authorities.map(\.rootCertificatePEM)
    return try SignedDataVerifier(configuration: configuration)
  }

  static func json<T: Encodable>(_ value: T) throws -> [UInt8] {
    Array(try JSONEncoder().encode(value))
  }
}

extension String {
  /// The token with its `index`th dot-separated segment replaced.
  func replacingSegment(_ index: Int, with segment: String) -> String {
    var parts = split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    parts[index] = segment
    return parts.joined(separator: ".")
  }

  func segment(_ index: Int) -> String {
    String(split(separator: ".", omittingEmptySubsequences: false)[index])
  }
}
