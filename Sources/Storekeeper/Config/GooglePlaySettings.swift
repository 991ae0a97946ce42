import Foundation

/// `GOOGLE_PLAY_*`, `GOOGLE_PUBSUB_*`, `GOOGLE_OIDC_JWKS_URL`: Google Play as a second store.
/// Off (nil in `AppConfig`) without a package name.
struct GooglePlaySettings: Sendable, Equatable {
  /// `GOOGLE_PLAY_PACKAGE_NAME`: the Android app's package name.
  var packageName: String
  /// `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`: the service account key (JSON) the server signs its
  /// token requests with.
  var serviceAccountFile: String
  /// `GOOGLE_PLAY_API_URL`: the Android Publisher API's base URL.
  var apiURL = "https://androidpublisher.googleapis.com"
  /// `GOOGLE_PUBSUB_AUDIENCE`: the `aud` the push subscription's OIDC tokens carry.
  var pubSubAudience: String?
  /// `GOOGLE_PUBSUB_SERVICE_ACCOUNT`: the service account email the push subscription signs as.
  var pubSubServiceAccount: String?
  /// `GOOGLE_OIDC_JWKS_URL`: where Google's token signing keys are read.
  var oidcJWKSURL = "https://www.googleapis.com/oauth2/v3/certs"
  /// `GOOGLE_PLAY_SWEEP_INTERVAL`: how often the voided purchases sweep and subscription
  /// reconciliation run (one instance each, by lease).
  var sweepIntervalMs: Int64 = 3_600_000
  /// One call to Google (token and request together).
  var timeoutMs: Int64 = 10_000
}
