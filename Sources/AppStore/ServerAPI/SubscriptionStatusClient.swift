import Foundation

/// `GET /inApps/v1/subscriptions/{originalTransactionId}` of the App Store Server API (Get All
/// Subscription Statuses): what Apple holds now about a customer's subscriptions, whatever
/// notifications did or did not arrive. Signs its bearer token like every Server API call
/// (`AppStoreAPIToken`).
public struct SubscriptionStatusClient: Sendable {
  public enum Failure: Error, Sendable, Equatable {
    /// Worth trying again later: no answer, a timeout, a 5xx or an unreadable answer.
    case unreachable(String)
    /// 429: Apple's rate limit; slow down before asking again.
    case rateLimited
    /// 401: Apple refuses the token; the key settings are wrong, not the subscription.
    case unauthorized
    /// 404 or 400 about this transaction id: Apple does not know it (another environment,
    /// another app); retrying will not help.
    case notFound(String)
    /// Any other refusal.
    case refused(String)
  }

  let baseURL: URL
  let api: AppStoreServerAPI

  public init(
    baseURL: URL, key: AppStoreAPIKey, bundleId: String,
    transport: any ReceiptTransport = HTTPReceiptTransport(), timeout: Duration = .seconds(10)
  ) {
    self.baseURL = baseURL
    api = AppStoreServerAPI(key: key, bundleId: bundleId, transport: transport, timeout: timeout)
  }

  public func statuses(originalTransactionId: String) async -> Result<
    SubscriptionStatuses, Failure
  > {
    // Apple's transaction ids are digits; anything else never reaches the URL path.
    guard !originalTransactionId.isEmpty, originalTransactionId.count <= 64,
      originalTransactionId.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLetter) })
    else { return .failure(.notFound("not a transaction id: \(originalTransactionId)")) }
    return await api.send(
      "inApps/v1/subscriptions/\(originalTransactionId)", at: baseURL,
      as: SubscriptionStatuses.self
    ).mapError(Self.failure)
  }

  /// The reconciler stops its pass on `unreachable`, `rateLimited` and `unauthorized`, and
  /// records `notFound` and `refused` against the one subscription asked about.
  private static func failure(_ failure: AppStoreServerAPIFailure) -> Failure {
    switch failure {
    case .unsigned: return .refused("could not sign the API token")
    case .unbuildable: return .refused("could not build the request")
    case .unreachable(let error): return .unreachable("subscription statuses unreachable: \(error)")
    case .unreadable: return .unreachable("subscription statuses answer is not readable")
    case .answered(status: 401, _): return .unauthorized
    case .rateLimited, .answered(status: 429, _): return .rateLimited
    case .answered(let status, let error)
    where AppStoreServerAPIFailure.isRetryable(status: status, error):
      return .unreachable("subscription statuses answered \(status): \(Self.detail(error))")
    case .answered(let status, let error) where status == 400 || status == 404:
      return .notFound("answered \(status): \(Self.detail(error))")
    case .answered(let status, let error):
      return .refused("answered \(status): \(Self.detail(error))")
    }
  }

  private static func detail(_ error: AppStoreAPIError?) -> String {
    guard let error else { return "no detail" }
    return "\(error.errorCode.map(String.init) ?? "-") \(error.errorMessage ?? "")"
  }
}
