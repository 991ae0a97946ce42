/// Why a manual adjustment was not made.
package enum AdjustmentRefusal: Error {
  /// The Idempotency-Key was used before by this admin for a different adjustment.
  case keyReused
}
