import Foundation

/// `POST /inApps/v1/notifications/history` of the App Store Server API: the notifications Apple
/// sent in a time range (only those that never reached the server, when asked), one page at a
/// time. What a server uses to recover notifications Apple gave up re-sending.
public struct NotificationHistoryClient: Sendable {
  public enum Failure: Error, Sendable, Equatable {
    /// Worth trying again later: no answer, a timeout, 429 or a 5xx.
    case retryable(String)
    /// Apple refused the request itself (a bad key, a range out of bounds): retrying the
    /// same request will not help.
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

  /// One page of notifications first sent in [startMs, endMs).
  public func page(
    startMs: Int64, endMs: Int64, onlyFailures: Bool, paginationToken: String? = nil
  ) async -> Result<NotificationHistoryPage, Failure> {
    await api.send(
      "inApps/v1/notifications/history",
      query: paginationToken.map { [URLQueryItem(name: "paginationToken", value: $0)] } ?? [],
      json: ["startDate": startMs, "endDate": endMs, "onlyFailures": onlyFailures],
      at: baseURL, as: NotificationHistoryPage.self
    ).mapError(Self.failure)
  }

  /// Recovery only tells apart whether the range is worth reading again later; every other
  /// answer, 401 included, becomes a refusal whose text (with Apple's message) it records.
  private static func failure(_ failure: AppStoreServerAPIFailure) -> Failure {
    switch failure {
    case .unsigned: return .refused("could not sign the API token")
    case .unbuildable: return .refused("could not build the request")
    case .unreachable(let error): return .retryable("notification history unreachable: \(error)")
    case .unreadable: return .retryable("notification history answer is not readable")
    case .rateLimited(let retryAt, _):
      return .retryable("notification history answered 429 (not before \(retryAt))")
    case .answered(let status, let error)
    where AppStoreServerAPIFailure.isRetryable(status: status, error):
      return .retryable("notification history answered \(status)")
    case .answered(let status, let error):
      return .refused(
        "notification history answered \(status): \(error?.errorMessage ?? "no detail")")
    }
  }
}
