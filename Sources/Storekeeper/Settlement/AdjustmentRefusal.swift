/// Why a manual adjustment was not made.
enum AdjustmentRefusal: Error {
  /// The Idempotency-Key was used before by this admin for a different adjustment.
  case keyReused
}
