import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Apple's `sendAttemptResult`: how one attempt to deliver a notification went, as the App
/// Store Server API's notification history reports it.
enum FakeSendAttemptResult: String, Sendable, Encodable {
  case success = "SUCCESS"
  case timedOut = "TIMED_OUT"
  case noResponse = "NO_RESPONSE"
  case socketIssue = "SOCKET_ISSUE"
  case invalidResponse = "INVALID_RESPONSE"
  case prematureClose = "PREMATURE_CLOSE"
  case unsuccessfulHTTPResponseCode = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
  case other = "OTHER"

  init(status: Int) {
    self = (200...206).contains(status) ? .success : .unsuccessfulHTTPResponseCode
  }

  init(_ error: any Error) {
    switch (error as? URLError)?.code {
    case .timedOut: self = .timedOut
    case .cannotConnectToHost, .cannotFindHost, .notConnectedToInternet: self = .socketIssue
    case .networkConnectionLost: self = .prematureClose
    case .badServerResponse, .cannotParseResponse: self = .invalidResponse
    case .zeroByteResource: self = .noResponse
    default: self = .other
    }
  }
}
