import Foundation

/// Checks an app receipt as Apple's receipt-validation guide does, before a byte of its payload
/// is believed: one signature over the payload, made by the certificate the container carries;
/// that signer chained through a Worldwide Developer Relations intermediate (marker
/// 1.2.840.113635.100.6.2.1) to Apple Inc. Root CA, judged at the receipt's own creation date
/// (attribute 12) as signed transactions are at their `signedDate`; the receipt-signing marker
/// (1.2.840.113635.100.6.11.1) on the leaf; this app's bundle id inside the signed payload.
///
/// The intermediate comes from the container, as Apple ships it, so both the SHA-1 chain that
/// signed receipts until January 2025 and the SHA-256 one since verify against the one root.
/// Extra roots (`APPLE_ROOT_CERTS`, the fake App Store's) are trusted beside it.
public final class AppReceiptSignatureVerifier: Sendable {
  let trust: TrustStore
  public let bundleId: String

  /// Throws when an extra root is not a readable PEM certificate.
  public init(configuration: AppStoreConfiguration) throws {
    trust = try TrustStore(
      anchorPEM: AppleRootCertificates.appleIncRootPEM,
      extraPEMs: configuration.extraRootCertificatesPEM)
    bundleId = configuration.bundleId
  }

  /// The receipt as a client posts it (base64, repaired as `ReceiptData` does).
  public func check(base64 receipt: String) -> AppReceiptCheck {
    guard let repaired = ReceiptData.repair(receipt),
      repaired.utf8.count <= ReceiptData.maximumLength,
      let data = Data(base64Encoded: repaired)
    else { return .refused(.malformedReceipt) }
    return check(der: [UInt8](data))
  }

  /// The container's bytes.
  public func check(der: [UInt8]) -> AppReceiptCheck {
    guard der.count <= ReceiptData.maximumLength, let container = PKCS7Container(der: der) else {
      return .notAppReceipt
    }
    guard let signer = container.signer() else { return .refused(.invalidSignature) }
    // Only now is the payload read, and only to learn the date the chain is judged at.
    guard let contents = AppReceiptReader.contents(of: container.content),
      let created = contents.creationDate
    else { return .refused(.malformedReceipt) }
    guard let carried = container.certificates else { return .refused(.invalidCertificate) }
    switch trust.verifiedChain(leaf: signer, untrusted: carried, at: created) {
    case .failure(let failure): return .refused(failure.reason)
    case .success(let chain):
      guard chain.count == 3 else { return .refused(.invalidCertificateChainLength) }
      guard chain[1].hasExtension(.appleIntermediate) else {
        return .refused(.missingIntermediateOID)
      }
      guard chain[0].hasExtension(.appleLeaf) else { return .refused(.missingLeafOID) }
    }
    guard contents.bundleId == bundleId else { return .refused(.bundleIdMismatch) }
    return .signed(SignedAppReceipt(contents: contents, signer: signer.commonName ?? ""))
  }
}
