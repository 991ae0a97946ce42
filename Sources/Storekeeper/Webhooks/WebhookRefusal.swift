import HTTP

/// Why a webhook admin request was refused.
enum WebhookRefusal: Error, Equatable {
  case endpointNotFound(String)
  case tooManyEndpoints(Int)
  case eventNotFound(String)
  case replayTooLarge(count: Int64, max: Int)
}

extension WebhookRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .endpointNotFound(let id):
      HTTPError(404, code: "webhook_endpoint_not_found", detail: "no webhook endpoint \(id)")
    case .tooManyEndpoints(let max):
      HTTPError(
        409, code: "too_many_webhook_endpoints",
        detail: "at most \(max) webhook endpoints may exist (WEBHOOK_MAX_ENDPOINTS)")
    case .eventNotFound(let id):
      HTTPError(404, code: "event_not_found", detail: "no event \(id)")
    case .replayTooLarge(let count, let max):
      HTTPError(
        422, code: "replay_too_large",
        detail: "the range holds \(count) events; one replay may queue at most \(max)")
    }
  }
}
