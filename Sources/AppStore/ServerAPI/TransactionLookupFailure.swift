/// Why the App Store Server API did not answer a transaction lookup.
public enum TransactionLookupFailure: Error, Sendable, Equatable {
  /// Worth trying again later: no answer, a timeout, 429, a 5xx or an unreadable answer.
  case retryable(String)
  /// 401: Apple does not take this server's key; the operator must fix it.
  case unauthorized
  /// 404: Apple knows no such transaction in the environment asked.
  case notFound
  /// Any other refusal of the request itself (a malformed transaction id, …).
  case refused(status: Int, String)
}
