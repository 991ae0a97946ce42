import AppStore

/// A verified notification as stored in `apple_notifications.payload`: the decoded body and
/// its decoded, verified nested transaction and renewal info.
package struct StoredNotification: Codable, Sendable {
  var notification: ResponseBodyV2DecodedPayload
  var transaction: JWSTransactionDecodedPayload?
  var renewalInfo: JWSRenewalInfoDecodedPayload?

  enum CodingKeys: String, CodingKey {
    case notification, transaction
    case renewalInfo = "renewal_info"
  }

  init(_ verified: VerifiedNotification) {
    notification = verified.payload
    transaction = verified.transaction
    renewalInfo = verified.renewalInfo
  }
}
