/// Why a Pub/Sub push is not taken; the edge maps each to its answer. Which token check
/// failed is logged, not told to the sender.
package enum GooglePushRefusal: Error, Equatable, Sendable {
  /// `GOOGLE_PUBSUB_AUDIENCE` and `GOOGLE_PUBSUB_SERVICE_ACCOUNT` unset: no push can be
  /// authenticated, so none is taken (503, so Pub/Sub keeps it until the operator fixes it).
  case notConfigured
  /// The OIDC token is missing, forged, expired, for another audience or another principal.
  case unauthenticated
  /// Google's keys could never be fetched: nothing verifies (503, Pub/Sub retries).
  case keysUnavailable
  /// Authenticated, but not a Pub/Sub push of a developer notification.
  case malformed(String)
}
