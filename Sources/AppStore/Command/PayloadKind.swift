import Foundation
import JOSE

/// What a JWS holds, guessed from its (not yet verified) payload keys; only picks the verifier.
enum PayloadKind {
  case transaction, renewalInfo, notification

  init(peeking token: String) {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
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
