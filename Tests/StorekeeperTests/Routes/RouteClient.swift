import Foundation
import HTTP
import StorekeeperLogging
import StorekeeperTestSupport
import Testing

@testable import Storekeeper
@testable import StorekeeperAPI
@testable import StorekeeperCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How a route test reaches the app: through the router's handler in process (no socket, as
/// the unit tests do), or through the real listener over a loopback socket. One test body runs
/// both ways, as Hummingbird's `testing: .router` and `.live` do.
enum RouteTransport: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case inProcess
  case socket

  var testDescription: String { rawValue }
}

/// The assembled `Application` (the domain, the API and the workers) on a migrated database
/// of its own, and a client for its routes over the chosen transport.
struct RouteClient: Sendable {
  struct Reply: Sendable {
    var status: Int
    /// Names lowercased.
    var headers: [String: String]
    var body: [UInt8]

    /// The body's top-level fields.
    func json() throws -> [String: JSONValue] {
      guard case .object(let fields) = try JSONCoding.decode(JSONValue.self, from: body) else {
        return [:]
      }
      return fields
    }
  }

  static let adminToken = "route-ring-admin-token-0123456789"

  let app: Application
  let transport: RouteTransport
  let port: Int

  /// Runs `body` against a freshly started app, stopped and its database dropped afterwards.
  static func with(
    _ transport: RouteTransport, _ body: (RouteClient) async throws -> Void
  ) async throws {
    let database = try await ScratchDatabase.create(prefix: "routes")
    var config = AppConfig(databaseURL: database.url, bundleId: "com.example.routes")
    config.port = 0
    config.eventLoops = 1
    config.databasePoolSize = 4
    config.adminTokens = [AdminToken(name: "ops", token: adminToken)]
    let app: Application
    do {
      app = try Application(config: config, logger: Logger(label: "routes", level: .critical))
    } catch {
      await database.drop()
      throw error
    }
    do {
      let port = try await app.start()
      try await body(RouteClient(app: app, transport: transport, port: port))
    } catch {
      await app.shutdown()
      await database.drop()
      throw error
    }
    await app.shutdown()
    await database.drop()
  }

  /// Sends one request; `admin` adds the admin token, `json` a JSON body.
  func send(
    _ method: HTTPMethod, _ target: String, admin: Bool = false, json: String? = nil,
    headers extra: [(String, String)] = []
  ) async throws -> Reply {
    var headers = extra
    if admin { headers.append(("Authorization", "Bearer \(Self.adminToken)")) }
    if json != nil { headers.append(("Content-Type", "application/json")) }
    let body = json.map { Array($0.utf8) } ?? []
    switch transport {
    case .inProcess:
      let response = await app.router.handle(
        Request(method: method, target: target, headers: HTTPHeaders(headers), body: body),
        remoteAddress: "127.0.0.1")
      var names: [String: String] = [:]
      for (name, value) in response.headers { names[name.lowercased()] = value }
      return Reply(status: response.status, headers: names, body: response.body)
    case .socket:
      var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(target)")!)
      request.httpMethod = method.rawValue
      for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
      if !body.isEmpty { request.httpBody = Data(body) }
      let (data, response) = try await URLSession.shared.data(for: request)
      let http = try #require(response as? HTTPURLResponse)
      var names: [String: String] = [:]
      for (name, value) in http.allHeaderFields {
        names["\(name)".lowercased()] = "\(value)"
      }
      return Reply(status: http.statusCode, headers: names, body: Array(data))
    }
  }
}

extension Trait where Self == ConditionTrait {
  /// On a suite that needs PostgreSQL: skipped, saying why, when `DATABASE_URL` is unset.
  static var database: Self {
    .enabled(
      if: DomainHarness.hasDatabase,
      "DATABASE_URL is not set: this suite needs PostgreSQL (scripts/test starts one and sets it)")
  }
}
