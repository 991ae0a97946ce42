/// No verification slot came free in time (or the queue was full); nothing was stored, so the
/// client may simply ask again after `retryAfterSeconds`.
package struct VerificationBusy: Error, Equatable, Sendable {
  var lane: VerificationGate.Lane
  package var retryAfterSeconds = 1
}
