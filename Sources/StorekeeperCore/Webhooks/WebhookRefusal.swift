/// Why a webhook admin request was refused.
package enum WebhookRefusal: Error, Equatable {
  case endpointNotFound(String)
  case tooManyEndpoints(Int)
  case eventNotFound(String)
  /// An event named for replay that this endpoint is never sent: another endpoint's
  /// `webhook.test`, or an `experiment.exposed` (the feed's only). `why` says which.
  case eventNotForEndpoint(id: String, why: String)
  case replayTooLarge(count: Int64, max: Int)
}
