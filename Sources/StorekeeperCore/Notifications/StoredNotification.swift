import AppStore

/// A verified notification as stored in `apple_notifications.payload`: the decoded body and
/// its decoded, verified nested transaction and renewal info.
package struct StoredNotification: Codable, Sendable {
  var notification: ResponseBodyV2DecodedPayload
  var transaction: JWSTransactionDecodedPayload?
  var renewalInfo: JWSRenewalInfoDecodedPayload?
  var appTransaction: AppTransaction?

  enum CodingKeys: String, CodingKey {
    case notification, transaction
    case renewalInfo = "renewal_info"
    case appTransaction = "app_transaction"
  }

  init(_ verified: VerifiedNotification) {
    notification = verified.payload
    transaction = verified.transaction
    renewalInfo = verified.renewalInfo
    appTransaction = verified.appTransaction
  }
}
