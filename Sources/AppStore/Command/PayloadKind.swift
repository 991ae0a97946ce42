import Foundation
import JOSE

/// What a JWS holds, guessed from its (not yet verified) payload keys, or an app receipt (text
/// that is no JWS); only picks the verifier.
enum PayloadKind {
  case transaction, renewalInfo, notification, appReceipt

  init(peeking token: String) {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count > 1 else {
      self = .appReceipt
      return
    }
    guard parts.count == 3, let bytes = Base64URL.decode(parts[1]),
      let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    else {
      self = .transaction
      return
    }
    if object["notificationType"] != nil {
      self = .notification
    } else if object["transactionId"] == nil, object["originalTransactionId"] != nil {
      self = .renewalInfo
    } else {
      self = .transaction
    }
  }
}
