/// A verified App Store Server Notification with its nested signed data, verified too.
public struct VerifiedNotification: Sendable, Codable, Equatable {
  public var payload: ResponseBodyV2DecodedPayload
  public var transaction: JWSTransactionDecodedPayload?
  public var renewalInfo: JWSRenewalInfoDecodedPayload?
  /// `appData.signedAppTransactionInfo`, verified.
  public var appTransaction: AppTransaction?

  public init(
    payload: ResponseBodyV2DecodedPayload, transaction: JWSTransactionDecodedPayload? = nil,
    renewalInfo: JWSRenewalInfoDecodedPayload? = nil, appTransaction: AppTransaction? = nil
  ) {
    self.payload = payload
    self.transaction = transaction
    self.renewalInfo = renewalInfo
    self.appTransaction = appTransaction
  }
}
