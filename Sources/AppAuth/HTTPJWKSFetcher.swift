import Foundation
import OutboundHTTP

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// GETs the JWKS document through an `OutboundHTTPSession` (libcurl on its own thread, never an
/// event loop's, with its deadline kept).
public final class HTTPJWKSFetcher: JWKSFetching {
  private let url: URL
  private let timeout: Duration
  private let session = OutboundHTTPSession()
  /// A key set is a few kilobytes; anything far larger is not one.
  static let maxBytes = 256 * 1024

  public init(url: URL, timeout: Duration = .seconds(5)) {
    self.url = url
    self.timeout = timeout
  }

  public func fetch() async throws -> [UInt8] {
    var request = URLRequest(url: url)
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    let answer: (status: Int, body: [UInt8])
    do {
      answer = try await session.send(request, timeout: timeout)
    } catch OutboundHTTPError.deadlinePassed {
      throw JWKSFetchError("timed out")
    } catch OutboundHTTPError.failed(let error) {
      throw JWKSFetchError(String(describing: error))
    } catch OutboundHTTPError.notHTTP {
      throw JWKSFetchError("HTTP status 0")
    }
    guard answer.status == 200 else { throw JWKSFetchError("HTTP status \(answer.status)") }
    guard answer.body.count <= Self.maxBytes else { throw JWKSFetchError("document too large") }
    return answer.body
  }
}
