/// Why a webhook admin request was refused.
package enum WebhookRefusal: Error, Equatable {
  case endpointNotFound(String)
  case tooManyEndpoints(Int)
  case eventNotFound(String)
  case replayTooLarge(count: Int64, max: Int)
}
