import Foundation

/// `PUT /inApps/v2/transactions/consumption/{transactionId}` of the App Store Server API (Send
/// Consumption Information, the v2 endpoint): the answer to a `CONSUMPTION_REQUEST`
/// notification, sent within the 12 hours Apple gives. Production and the sandbox are Apple's
/// two hosts; the token is signed like every Server API call (`AppStoreAPIToken`).
public struct ConsumptionInformationClient: Sendable {
  public enum Failure: Error, Sendable, Equatable {
    /// Worth trying again later: no answer, a timeout, a 5xx.
    case retryable(String)
    /// 429: not before `retryAt`, the instant Apple named.
    case rateLimited(retryAt: Date)
    /// 401: Apple refuses the token; the key settings are wrong. Also worth retrying once an
    /// operator fixes them, within the window.
    case unauthorized
    /// Any other refusal (400 about a field, 404 for a transaction Apple does not know):
    /// sending the same again will not help.
    case refused(status: Int, String)
  }

  let productionURL: URL
  let sandboxURL: URL
  let api: AppStoreServerAPI

  public init(
    productionURL: URL, sandboxURL: URL, key: AppStoreAPIKey, bundleId: String,
    transport: any ReceiptTransport = HTTPReceiptTransport(), timeout: Duration = .seconds(10)
  ) {
    self.productionURL = productionURL
    self.sandboxURL = sandboxURL
    api = AppStoreServerAPI(key: key, bundleId: bundleId, transport: transport, timeout: timeout)
  }

  /// Sends `information` about `transactionId` to the host of `environment` ("Production" or
  /// "Sandbox"); Apple's 2xx status on success.
  public func send(
    _ information: ConsumptionInformation, transactionId: String, environment: String
  ) async -> Result<Int, Failure> {
    // Apple's transaction ids are digits; anything else never reaches the URL path.
    guard !transactionId.isEmpty, transactionId.count <= 64,
      transactionId.allSatisfy({ $0.isASCII && $0.isNumber })
    else { return .failure(.refused(status: 0, "not a transaction id: \(transactionId)")) }
    let base = environment == "Sandbox" ? sandboxURL : productionURL
    return await api.exchange(
      "inApps/v2/transactions/consumption/\(transactionId)", method: "PUT",
      json: information.json, at: base
    ).map(\.status).mapError(Self.failure)
  }

  private static func failure(_ failure: AppStoreServerAPIFailure) -> Failure {
    switch failure {
    case .unsigned: return .refused(status: 0, "could not sign the API token")
    case .unbuildable, .unreadable: return .refused(status: 0, "could not build the request")
    case .unreachable(let error): return .retryable("unreachable: \(error)")
    case .rateLimited(let retryAt, _): return .rateLimited(retryAt: retryAt)
    case .answered(status: 401, _): return .unauthorized
    case .answered(let status, let error)
    where AppStoreServerAPIFailure.isRetryable(status: status, error):
      return .retryable("answered \(status)")
    case .answered(let status, let error):
      let detail = error.map { "\($0.errorCode.map(String.init) ?? "-") \($0.errorMessage ?? "")" }
      return .refused(status: status, "answered \(status): \(detail ?? "no detail")")
    }
  }
}
