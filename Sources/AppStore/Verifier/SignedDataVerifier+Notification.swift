extension SignedDataVerifier {
  /// Verifies a notification's `signedPayload`, checks that it is for this app and an allowed
  /// environment, then verifies the transaction and renewal info nested in it by the same rules.
  public func verifyNotification(_ signedPayload: String) -> VerificationResult<
    VerifiedNotification
  > {
    let outer = verifySignedPayload(signedPayload, as: ResponseBodyV2DecodedPayload.self)
    guard case .valid(let payload) = outer else {
      return outer.map { VerifiedNotification(payload: $0) }
    }
    if let refusal = appMismatch(in: payload) { return .refused(refusal) }

    var notification = VerifiedNotification(payload: payload)
    if let signed = payload.data?.signedTransactionInfo {
      switch verifyTransaction(signed) {
      case .valid(let transaction): notification.transaction = transaction
      case .invalid(let reason): return .invalid(reason)
      case .retryable(let reason): return .retryable(reason)
      case .misconfigured(let problem): return .misconfigured(problem)
      }
    }
    if let signed = payload.data?.signedRenewalInfo {
      switch verifyRenewalInfo(signed) {
      case .valid(let renewal): notification.renewalInfo = renewal
      case .invalid(let reason): return .invalid(reason)
      case .retryable(let reason): return .retryable(reason)
      case .misconfigured(let problem): return .misconfigured(problem)
      }
    }
    return .valid(notification)
  }

  /// Which app and environment the notification is about: from `data`, else `summary`, else the
  /// external purchase token (whose id starts with "SANDBOX" outside Production).
  private func appMismatch(in payload: ResponseBodyV2DecodedPayload) -> RefusalReason? {
    let bundleId: String?
    let environment: String?
    let appAppleId: Int64?
    if let data = payload.data {
      (bundleId, environment, appAppleId) = (data.bundleId, data.environment, data.appAppleId)
    } else if let summary = payload.summary {
      (bundleId, environment, appAppleId) = (
        summary.bundleId, summary.environment, summary.appAppleId
      )
    } else if let token = payload.externalPurchaseToken {
      let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
      bundleId = token.bundleId
      environment = (sandbox ? AppStoreEnvironment.sandbox : .production).rawValue
      appAppleId = token.appAppleId
    } else {
      return .malformedPayload
    }
    guard bundleId == configuration.bundleId else { return .bundleIdMismatch }
    guard configuration.allows(environment: environment) else { return .environmentNotAllowed }
    if environment == AppStoreEnvironment.production.rawValue,
      let expected = configuration.appAppleId,
      appAppleId != expected
    {
      return .appAppleIdMismatch
    }
    return nil
  }
}
