/// A notification that is not stored: its signature or its body does not hold up.
struct NotificationRefusal: Error, Equatable, Sendable {
  var reason: String

  var code: String { "invalid_notification" }
  var detail: String { "the signedPayload did not verify: \(reason)" }
}
