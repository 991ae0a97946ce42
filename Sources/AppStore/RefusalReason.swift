/// Every reason a signed payload is refused, spelled as it appears in `VerificationResult`.
public enum RefusalReason: String, Error, Sendable, CaseIterable {
  case malformedJWS = "malformed_jws"
  case unsupportedAlgorithm = "unsupported_algorithm"
  case invalidCertificateChainLength = "invalid_certificate_chain_length"
  case invalidCertificate = "invalid_certificate"
  case untrustedRoot = "untrusted_root"
  case missingIntermediateOID = "missing_intermediate_oid"
  case missingLeafOID = "missing_leaf_oid"
  case certificateExpired = "certificate_expired"
  case invalidSignature = "invalid_signature"
  case malformedPayload = "malformed_payload"
  /// Verified, but without a field settling needs (`requireSettleable()`).
  case incompleteTransaction = "incomplete_transaction"
  case bundleIdMismatch = "bundle_id_mismatch"
  case appAppleIdMismatch = "app_apple_id_mismatch"
  case environmentNotAllowed = "environment_not_allowed"
  case malformedReceipt = "malformed_receipt"
}

extension VerificationResult {
  static func refused(_ reason: RefusalReason) -> Self { .invalid(reason.rawValue) }
}
