import Foundation
import OutboundHTTP

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Fetches the JWKS document's bytes; a seam so tests can serve their own.
public protocol PushKeyFetching: Sendable {
  func fetch() async throws -> [UInt8]
}

/// Why a fetch produced no document.
public struct PushKeyFetchError: Error, CustomStringConvertible, Sendable {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// GETs the JWKS (`GOOGLE_OIDC_JWKS_URL`) through an `OutboundHTTPSession`.
public final class HTTPPushKeyFetcher: PushKeyFetching {
  public static let googleCertsURL: URL = {
    guard let url = URL(string: "https://www.googleapis.com/oauth2/v3/certs") else {
      preconditionFailure("Google's certs URL is not a URL")
    }
    return url
  }()
  /// A key set is a few kilobytes.
  static let maxBytes = 256 * 1024

  private let url: URL
  private let timeout: Duration
  private let session = OutboundHTTPSession()

  public init(url: URL = googleCertsURL, timeout: Duration = .seconds(5)) {
    self.url = url
    self.timeout = timeout
  }

  public func fetch() async throws -> [UInt8] {
    var request = URLRequest(url: url)
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    let answer: (status: Int, body: [UInt8])
    do {
      answer = try await session.send(request, timeout: timeout)
    } catch {
      throw PushKeyFetchError("\(error)")
    }
    guard answer.status == 200 else { throw PushKeyFetchError("HTTP status \(answer.status)") }
    guard answer.body.count <= Self.maxBytes else { throw PushKeyFetchError("document too large") }
    return answer.body
  }
}
