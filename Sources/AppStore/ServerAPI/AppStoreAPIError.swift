import Foundation

/// The body the App Store Server API answers a refusal with (`errorCode`, `errorMessage`), read
/// for the log and the refusal's reason; nil when the body is not one.
struct AppStoreAPIError: Decodable {
  var errorCode: Int?
  var errorMessage: String?

  init?(body: [UInt8]) {
    guard let error = try? JSONDecoder().decode(Self.self, from: Data(body)) else { return nil }
    self = error
  }
}
