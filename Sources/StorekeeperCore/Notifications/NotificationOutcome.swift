/// What applying one notification did: its new state and a short result for admins.
package struct NotificationOutcome: Equatable, Sendable {
  var state: NotificationState
  var result: String

  static func processed(_ result: String) -> NotificationOutcome {
    .init(state: .processed, result: result)
  }
  static func deferred(_ result: String) -> NotificationOutcome {
    .init(state: .deferred, result: result)
  }

  /// Why a deferred notification waits, as its `result` records it.
  enum Waiting {
    static let transactionUnknown = "transaction_unknown"
    static let transactionHasNoOrder = "transaction_has_no_order"
    static let originalTransactionUnknown = "original_transaction_unknown"
  }
}
