/// What the Google Play Developer API says of a purchase token, told apart by what Storekeeper
/// does about it.
package enum GoogleVerdict: Sendable, Equatable {
  /// Paid: it may be credited.
  case purchased(GooglePurchase)
  /// Bought but not yet paid (a slow form of payment): waits, and is granted when it completes.
  case pending
  /// Canceled before it was paid, or a subscription whose pending purchase was canceled.
  case canceled
  /// 404 or 410: Google does not know this token for this product and package.
  case unknownToken(String)
  /// Google knows the subscription, but none of its items is this product (or base plan).
  case otherProduct([String])
  /// Not judged yet: Google unreachable, a 5xx, 429 (quota) or an unreadable answer.
  case retryable(String)
  /// Google refused this server's service account (401/403): the operator's to fix.
  case misconfigured(String)
  /// Google refused the request itself (400, another status): the same request never succeeds.
  case refused(String)
}
