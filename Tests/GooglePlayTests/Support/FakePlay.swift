import FakeGooglePlay
import Foundation
import GooglePlay
import StorekeeperLogging

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A fake Google Play on a real loopback socket, a client configured against it, and a small
/// JSON helper for its control endpoints.
struct FakePlay: Sendable {
  struct Failure: Error, CustomStringConvertible { var description: String }

  static let quiet = Logger(label: "fake-googleplay-test", level: .error)
  static let package = "com.example.storekeeper"

  let server: FakeGooglePlayServer
  let base: URL
  let key: ServiceAccountKey
  let tokens: AccessTokenSource
  let client: GooglePlayClient

  static func with<T: Sendable>(
    timeout: Duration = .seconds(60),
    _ configure: (inout FakeGooglePlayServer.Configuration) -> Void = { _ in },
    _ body: (FakePlay) async throws -> T
  ) async throws -> T {
    var configuration = FakeGooglePlayServer.Configuration()
    configuration.logger = quiet
    configure(&configuration)
    // Its keys are made off the global executor (see `onOwnThread`).
    let server = try await onOwnThread { [configuration] in
      try FakeGooglePlayServer(configuration: configuration)
    }
    try server.start()
    guard let base = server.baseURL else { throw Failure(description: "no base URL") }
    let key = try ServiceAccountKey(json: try server.serviceAccountKeyJSON())
    let tokens = AccessTokenSource(key: key)
    let client = GooglePlayClient(
      packageName: package, tokens: tokens, baseURL: base, timeout: timeout)
    let play = FakePlay(server: server, base: base, key: key, tokens: tokens, client: client)
    do {
      let result = try await body(play)
      await server.shutdown()
      return result
    } catch {
      await server.shutdown()
      throw error
    }
  }

  /// POSTs `object` to a control endpoint; the answer's JSON object.
  @discardableResult
  func control(_ path: String, _ object: [String: Any] = [:]) async throws -> [String: Any] {
    var request = URLRequest(url: base.appendingPathComponent(path))
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = try JSONSerialization.data(withJSONObject: object)
    let (data, response) = try await URLSession.shared.data(for: request)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard (200...299).contains(status) else {
      throw Failure(
        description: "\(path) answered \(status): \(String(decoding: data, as: UTF8.self))")
    }
    return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
  }

  func get(_ path: String) async throws -> [String: Any] {
    let (data, _) = try await URLSession.shared.data(from: base.appendingPathComponent(path))
    return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
  }

  func purchase(_ fields: [String: Any]) async throws -> String {
    guard let token = try await control("fake/v1/products", fields)["purchase_token"] as? String
    else { throw Failure(description: "no purchase token") }
    return token
  }

  func subscribe(_ fields: [String: Any]) async throws -> String {
    guard
      let token = try await control("fake/v1/subscriptions", fields)["purchase_token"] as? String
    else { throw Failure(description: "no purchase token") }
    return token
  }
}
