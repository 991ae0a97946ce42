/// A keyed order whose key another request took over while it ran (its claim went stale
/// after `IdempotencyStore.staleAfterSeconds`): nothing of it is written, and the key's
/// answer is the other request's.
package struct IdempotencyKeyTakenOver: Error, Equatable {
  package init() {}
}
