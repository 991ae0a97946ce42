/// What applying one notification did: its new state and a short result for admins.
package struct NotificationOutcome: Equatable, Sendable {
  var state: NotificationState
  var result: NotificationResult

  static func processed(_ result: NotificationResult) -> NotificationOutcome {
    .init(state: .processed, result: result)
  }
  static func deferred(_ result: NotificationResult) -> NotificationOutcome {
    .init(state: .deferred, result: result)
  }
}
