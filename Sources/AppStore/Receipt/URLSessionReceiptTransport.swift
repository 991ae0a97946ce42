import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The production transport: HTTPS through URLSession, one ephemeral session, no caching.
public final class URLSessionReceiptTransport: ReceiptTransport {
  private let session: URLSession

  public init() {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpShouldSetCookies = false
    session = URLSession(configuration: configuration)
  }

  deinit { session.finishTasksAndInvalidate() }

  public func post(url: URL, body: [UInt8], timeout: Duration) async throws -> (
    status: Int, body: [UInt8]
  ) {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
    request.httpMethod = "POST"
    request.httpBody = Data(body)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    return try await withCheckedThrowingContinuation { continuation in
      let task = session.dataTask(with: request) { data, response, error in
        if let error {
          continuation.resume(throwing: Self.transportError(error))
        } else if let response = response as? HTTPURLResponse {
          continuation.resume(returning: (response.statusCode, data.map { [UInt8]($0) } ?? []))
        } else {
          continuation.resume(throwing: ReceiptTransportError.connectionFailed("no HTTP response"))
        }
      }
      task.resume()
    }
  }

  private static func transportError(_ error: any Error) -> ReceiptTransportError {
    if let urlError = error as? URLError, urlError.code == .timedOut { return .timedOut }
    return .connectionFailed(String(describing: error))
  }
}
