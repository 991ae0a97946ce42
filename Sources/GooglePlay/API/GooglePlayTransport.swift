import Foundation
import OutboundHTTP

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Sends one request to Google; a seam so tests can answer for Google. Throws an
/// `OutboundHTTPError` when no HTTP answer came within `timeout`.
public protocol GooglePlayTransport: Sendable {
  func send(
    method: String, url: URL, headers: [String: String], body: [UInt8]?, timeout: Duration
  ) async throws -> OutboundHTTPAnswer
}

/// The transport of production: an `OutboundHTTPSession` (libcurl on its own thread, never an
/// event loop's, with the deadline kept).
public final class HTTPGooglePlayTransport: GooglePlayTransport {
  private let session = OutboundHTTPSession()

  public init() {}

  public func send(
    method: String, url: URL, headers: [String: String], body: [UInt8]?, timeout: Duration
  ) async throws -> OutboundHTTPAnswer {
    var request = URLRequest(url: url)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let body { request.httpBody = Data(body) }
    return try await session.exchange(request, timeout: timeout)
  }
}
