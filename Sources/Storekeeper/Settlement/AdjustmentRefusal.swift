import HTTP

/// Why a manual adjustment was not made.
enum AdjustmentRefusal: Error, DomainProblem {
  /// The Idempotency-Key was used before by this admin for a different adjustment.
  case keyReused

  var problem: HTTPError {
    switch self {
    case .keyReused:
      HTTPError(
        422, code: "idempotency_key_reused",
        detail: "this Idempotency-Key was used for a different adjustment")
    }
  }
}
