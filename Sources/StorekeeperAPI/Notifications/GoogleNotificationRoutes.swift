import HTTP
import StorekeeperCore

/// `POST /v1/google/notifications`: Cloud Pub/Sub's push endpoint for Google Play's real-time
/// developer notifications. Who may call it: Pub/Sub, proven by the OIDC token of the
/// configured push service account for the configured audience; anyone else is 401 before
/// the body is judged (its size, its media type, its content). Only the server's own body
/// limit (`ServerConfiguration.maxBodyBytes`, 1 MiB) comes first: the body is read before any
/// handler runs. A stored or redelivered push is 200 (so Pub/Sub stops), and its effect is
/// applied by the notification worker, reading the purchase back from Google.
package struct GoogleNotificationRoutes: Sendable {
  /// Nil while Google Play is off: the route answers 503 `google_play_disabled`.
  let receiver: GooglePushReceiver?
  let wake: @Sendable () -> Void

  package init(receiver: GooglePushReceiver?, wake: @escaping @Sendable () -> Void) {
    self.receiver = receiver
    self.wake = wake
  }

  package func register(_ router: inout APIRouter) {
    router.add(.post, "/v1/google/notifications") { request, context in
      guard let receiver else { throw GooglePlayOff().problem }
      // The caller first: a stranger learns nothing of what this route would take.
      let caller = try await receiver.authenticate(authorization: request.headers["Authorization"])
      guard request.body.count <= GooglePushReceiver.maxBodyBytes else {
        throw HTTPError(413, code: "content_too_large", detail: "a push is at most 64 KiB")
      }
      try RequestFields.requireJSON(request)
      let stored = try await receiver.store(request.body, caller)
      if stored { wake() }
      return try JSONCoding.response(["status": stored ? "stored" : "duplicate"])
    }
  }
}
