import Foundation
import OutboundHTTP

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The production transport: HTTPS through the process's `OutboundHTTPSession` (no cache, no
/// cookies, its deadline kept).
public final class HTTPReceiptTransport: ReceiptTransport {
  private let session = OutboundHTTPSession()

  public init() {}

  public func post(url: URL, body: [UInt8], headers: [String: String], timeout: Duration)
    async throws -> (status: Int, body: [UInt8])
  {
    let answer = try await exchange(
      method: "POST", url: url, body: body, headers: headers, timeout: timeout)
    return (answer.status, answer.body)
  }

  public func get(url: URL, headers: [String: String], timeout: Duration) async throws
    -> (status: Int, body: [UInt8])
  {
    let answer = try await exchange(
      method: "GET", url: url, body: nil, headers: headers, timeout: timeout)
    return (answer.status, answer.body)
  }

  /// The verifiers tell a timeout (`ReceiptTransportError.timedOut`) from other failures.
  public func exchange(
    method: String, url: URL, body: [UInt8]?, headers: [String: String], timeout: Duration
  ) async throws -> OutboundHTTPAnswer {
    var request = URLRequest(url: url)
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
