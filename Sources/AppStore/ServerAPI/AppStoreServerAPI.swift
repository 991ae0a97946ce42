import Foundation

/// What every App Store Server API endpoint does alike: sign the bearer token
/// (`AppStoreAPIToken`), send the request to the environment's base URL within the timeout,
/// read a 200 as the endpoint's JSON and anything else as an `AppStoreServerAPIFailure`. The
/// clients keep only what is their endpoint's: the path, the query, the body, and what each
/// failure means to their callers.
struct AppStoreServerAPI: Sendable {
  let key: AppStoreAPIKey
  let bundleId: String
  let transport: any ReceiptTransport
  let timeout: Duration

  /// A GET of `path` under the environment's `baseURL`, or a POST of `json` (a
  /// JSONSerialization object) when there is one.
  func send<Answer: Decodable>(
    _ path: String, query: [URLQueryItem] = [], json: [String: Any]? = nil, at baseURL: URL,
    as answer: Answer.Type
  ) async -> Result<Answer, AppStoreServerAPIFailure> {
    guard let token = AppStoreAPIToken.make(key: key, bundleId: bundleId) else {
      return .failure(.unsigned)
    }
    var components = URLComponents(
      url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
    if !query.isEmpty { components?.queryItems = query }
    guard let url = components?.url else { return .failure(.unbuildable) }
    var body: [UInt8]?
    if let json {
      guard let data = try? JSONSerialization.data(withJSONObject: json) else {
        return .failure(.unbuildable)
      }
      body = [UInt8](data)
    }
    let headers = ["Authorization": "Bearer " + token]
    let answer: (status: Int, body: [UInt8])
    do {
      if let body {
        answer = try await transport.post(url: url, body: body, headers: headers, timeout: timeout)
      } else {
        answer = try await transport.get(url: url, headers: headers, timeout: timeout)
      }
    } catch {
      return .failure(.unreachable(error))
    }
    guard answer.status == 200 else {
      return .failure(.answered(status: answer.status, AppStoreAPIError(body: answer.body)))
    }
    guard let decoded = try? JSONDecoder().decode(Answer.self, from: Data(answer.body)) else {
      return .failure(.unreadable)
    }
    return .success(decoded)
  }

  /// A PUT of `json` to `path` whose answer has no body Apple defines (Send Consumption
  /// Information answers 202 Accepted): any 2xx is success, with its status.
  func put(_ path: String, json: [String: Any], at baseURL: URL) async -> Result<
    Int, AppStoreServerAPIFailure
  > {
    guard let token = AppStoreAPIToken.make(key: key, bundleId: bundleId) else {
      return .failure(.unsigned)
    }
    guard
      let data = try? JSONSerialization.data(withJSONObject: json, options: .sortedKeys)
    else { return .failure(.unbuildable) }
    let url = baseURL.appendingPathComponent(path)
    let answer: (status: Int, body: [UInt8])
    do {
      answer = try await transport.put(
        url: url, body: [UInt8](data), headers: ["Authorization": "Bearer " + token],
        timeout: timeout)
    } catch {
      return .failure(.unreachable(error))
    }
    guard (200...299).contains(answer.status) else {
      return .failure(.answered(status: answer.status, AppStoreAPIError(body: answer.body)))
    }
    return .success(answer.status)
  }
}
