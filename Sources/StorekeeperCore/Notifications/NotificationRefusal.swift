/// A notification that is not stored: its signature or its body does not hold up.
package struct NotificationRefusal: Error, Equatable, Sendable {
  var reason: String

  package var code: String { "invalid_notification" }
  package var detail: String { "the signedPayload did not verify: \(reason)" }
}
