import Foundation

/// Set App Account Token (`PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`,
/// body `{"appAccountToken": uuid}`, 200 without a body): binds a purchase the customer made
/// outside the app (an offer code, a promoted purchase) to the account the server assigned it
/// to, so Apple's later transactions and notifications for it carry that token.
public struct AppAccountTokenClient: Sendable {
  public enum Failure: Error, Sendable, Equatable {
    /// Worth trying again: no answer, a timeout, a 5xx, an unreadable answer.
    case retryable(String)
    /// 429: not before `retryAt`.
    case rateLimited(retryAt: Date)
    /// 401: Apple refuses the key; the settings are wrong, not the purchase.
    case unauthorized
    /// Apple refused this purchase (unknown, not an original transaction, family shared,
    /// not a UUID): retrying the same request will not help.
    case refused(status: Int, String)
  }

  let api: AppStoreServerAPI

  public init(
    key: AppStoreAPIKey, bundleId: String,
    transport: any ReceiptTransport = HTTPReceiptTransport(), timeout: Duration = .seconds(10)
  ) {
    api = AppStoreServerAPI(key: key, bundleId: bundleId, transport: transport, timeout: timeout)
  }

  /// Sets `token` (a UUID, sent lowercased) on the purchase whose original transaction is
  /// `originalTransactionId`, at the environment's `baseURL`.
  public func setToken(_ token: String, originalTransactionId: String, at baseURL: URL) async
    -> Result<Void, Failure>
  {
    guard TransactionLookupClient.isValidId(originalTransactionId) else {
      return .failure(.refused(status: 400, "not a transaction id"))
    }
    guard let uuid = UUID(uuidString: token) else {
      return .failure(.refused(status: 400, "not a UUID"))
    }
    return await api.exchange(
      "inApps/v1/transactions/\(originalTransactionId)/appAccountToken", method: "PUT",
      json: ["appAccountToken": uuid.uuidString.lowercased()], at: baseURL
    ).map { _ in () }.mapError(Self.failure)
  }

  private static func failure(_ failure: AppStoreServerAPIFailure) -> Failure {
    switch failure {
    case .unsigned: return .refused(status: 0, "could not sign the API token")
    case .unbuildable: return .refused(status: 0, "could not build the request")
    case .unreachable(ReceiptTransportError.timedOut): return .retryable("timeout")
    case .unreachable(let error): return .retryable("unreachable: \(error)")
    case .unreadable: return .retryable("unreadable answer")
    case .rateLimited(let retryAt, _): return .rateLimited(retryAt: retryAt)
    case .answered(status: 401, _): return .unauthorized
    case .answered(let status, let error)
    where AppStoreServerAPIFailure.isRetryable(status: status, error):
      return .retryable("answered \(status)\(detail(error))")
    case .answered(let status, let error):
      return .refused(status: status, "answered \(status)\(detail(error))")
    }
  }

  private static func detail(_ error: AppStoreAPIError?) -> String {
    guard let error else { return "" }
    return ": \(error.errorCode.map(String.init) ?? "-") \(error.errorMessage ?? "")"
  }
}
