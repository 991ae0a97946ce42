import Foundation
import OutboundHTTP

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The production transport: HTTPS through one `OutboundHTTPSession` (ephemeral, no caching,
/// its deadline kept).
public final class HTTPReceiptTransport: ReceiptTransport {
  private let session = OutboundHTTPSession()

  public init() {}

  public func post(url: URL, body: [UInt8], headers: [String: String], timeout: Duration)
    async throws -> (status: Int, body: [UInt8])
  {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
    request.httpMethod = "POST"
    request.httpBody = Data(body)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return try await send(request, timeout: timeout)
  }

  public func get(url: URL, headers: [String: String], timeout: Duration) async throws
    -> (status: Int, body: [UInt8])
  {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
    request.httpMethod = "GET"
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return try await send(request, timeout: timeout)
  }

  public func exchange(
    method: String, url: URL, body: [UInt8]?, headers: [String: String], timeout: Duration
  ) async throws -> OutboundHTTPAnswer {
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    var request = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
    request.httpMethod = method
    if let body {
      request.httpBody = Data(body)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    do {
      return try await session.exchange(request, timeout: timeout)
    } catch {
      throw Self.transportError(error)
    }
  }

  /// The verifiers tell a timeout (`ReceiptTransportError.timedOut`) from other failures.
  private func send(_ request: URLRequest, timeout: Duration) async throws
    -> (status: Int, body: [UInt8])
  {
    do {
      return try await session.send(request, timeout: timeout)
    } catch {
      throw Self.transportError(error)
    }
  }

  private static func transportError(_ error: any Error) -> any Error {
    switch error {
    case OutboundHTTPError.deadlinePassed: return ReceiptTransportError.timedOut
    case OutboundHTTPError.failed(let error):
      return ReceiptTransportError.connectionFailed(String(describing: error))
    case OutboundHTTPError.notHTTP:
      return ReceiptTransportError.connectionFailed("no HTTP response")
    default: return error
    }
  }
}
