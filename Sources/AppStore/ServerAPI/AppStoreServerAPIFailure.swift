import Foundation

/// Why an App Store Server API request brought no usable 200, told apart as every endpoint
/// needs; what each case means to a caller (retry, misconfiguration, refusal) is the
/// endpoint's client's to say, since the endpoints' callers differ.
enum AppStoreServerAPIFailure: Error {
  /// The bearer token could not be signed with the key; nothing was sent.
  case unsigned
  /// No URL or body could be made from the request's parts; nothing was sent.
  case unbuildable
  /// No HTTP answer: the transport's error (a timeout, a refused connection).
  case unreachable(any Error)
  /// A status other than 200, with Apple's error body when it sent one.
  case answered(status: Int, AppStoreAPIError?)
  /// 429 until Apple's `Retry-After` instant (or its default rest), after the tries that
  /// waited for it: nothing more is sent to the endpoint before `retryAt`.
  case rateLimited(retryAt: Date, AppStoreAPIError?)
  /// A 200 whose body is not the endpoint's JSON.
  case unreadable

  /// 429 (Apple's rate limit), 5xx, and the errors Apple documents as "try again" whatever
  /// their status (a 404 while an account or app is still propagating after a purchase): the
  /// same request may succeed later.
  static func isRetryable(status: Int, _ error: AppStoreAPIError?) -> Bool {
    status == 429 || (500...599).contains(status)
      || error?.errorCode.map(retryableErrorCodes.contains) == true
  }

  /// AccountNotFoundRetryableError, AppNotFoundRetryableError,
  /// OriginalTransactionIdNotFoundRetryableError, GeneralInternalRetryableError.
  static let retryableErrorCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]
}
