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
    if let signed = payload.appData?.signedAppTransactionInfo {
      switch verifyAppTransaction(signed) {
      case .valid(let app): notification.appTransaction = app
      case .invalid(let reason): return .invalid(reason)
      case .retryable(let reason): return .retryable(reason)
      case .misconfigured(let problem): return .misconfigured(problem)
      }
    }
    return .valid(notification)
  }

  /// Verifies a signed app transaction (`JWSAppTransaction`) as Apple's library does: the
  /// chain at the receipt's creation date, this app's bundle id, an allowed environment
  /// (`receiptType`).
  public func verifyAppTransaction(_ jws: String) -> VerificationResult<AppTransaction> {
    let result = verifySignedPayload(jws, as: AppTransaction.self)
    guard case .valid(let app) = result else { return result }
    guard app.bundleId == configuration.bundleId else { return .refused(.bundleIdMismatch) }
    guard configuration.allows(environment: app.receiptType) else {
      return .refused(.environmentNotAllowed)
    }
    return .valid(app)
  }

  /// Which app and environment the notification is about: from `data`, else `summary`, else the
  /// external purchase token (whose id starts with "SANDBOX" outside Production), else
  /// `appData`.
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
    } else if let app = payload.appData {
      (bundleId, environment, appAppleId) = (app.bundleId, app.environment, app.appAppleId)
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
