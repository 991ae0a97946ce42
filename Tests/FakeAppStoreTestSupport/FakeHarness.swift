import AppStore
import FakeAppStore
import Foundation
import HTTP
import StorekeeperLogging
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A fake App Store on a real loopback socket, and a small JSON client for it.
package struct FakeHarness: Sendable {
  package struct Reply: @unchecked Sendable {
    // JSON objects from JSONSerialization: read-only once parsed.
    package var status: Int
    package var json: [String: Any]
    package var headers: [String: String]

    package subscript(key: String) -> Any? { json[key] }
    package func string(_ key: String) -> String? { json[key] as? String }
  }

  package struct HarnessError: Error, CustomStringConvertible {
    package var description: String

    package init(description: String) { self.description = description }
  }

  package static let bundleId = "com.example.storekeeper"
  package static let quiet = Logger(label: "fake-appstore-test", level: .error)

  package let server: FakeAppStoreServer
  package let base: URL

  package init(server: FakeAppStoreServer, base: URL) {
    self.server = server
    self.base = base
  }

  /// Runs `body` against a freshly started fake and shuts it down afterwards, even on failure.
  package static func with<T: Sendable>(
    _ configure: (inout FakeAppStoreServer.Configuration) -> Void = { _ in },
    _ body: (FakeHarness) async throws -> T
  ) async throws -> T {
    var configuration = FakeAppStoreServer.Configuration()
    configuration.logger = quiet
    configure(&configuration)
    let server = try FakeAppStoreServer(configuration: configuration)
    try server.start()
    guard let base = server.baseURL else { throw HarnessError(description: "no base URL") }
    let harness = FakeHarness(server: server, base: base)
    do {
      let result = try await body(harness)
      await server.shutdown()
      return result
    } catch {
      await server.shutdown()
      throw error
    }
  }

  // MARK: HTTP

  package func post(_ path: String, _ object: [String: Any], headers: [String: String] = [:])
    async throws -> Reply
  {
    try await send(
      "POST", path, body: JSONSerialization.data(withJSONObject: object), headers: headers)
  }

  package func get(_ path: String) async throws -> Reply {
    try await send("GET", path, body: nil, headers: [:])
  }

  package func send(_ method: String, _ path: String, body: Data?, headers: [String: String])
    async throws
    -> Reply
  {
    var request = URLRequest(
      url: base.appendingPathComponent(path), cachePolicy: .reloadIgnoringLocalCacheData,
      timeoutInterval: 20)
    request.httpMethod = method
    request.httpBody = body
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    guard let http = response as? HTTPURLResponse else {
      throw HarnessError(description: "no HTTP response")
    }
    let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
      if let name = name as? String, let value = value as? String {
        fields[name.lowercased()] = value
      }
    }
    return Reply(status: http.statusCode, json: json, headers: fields)
  }

  /// `POST /fake/v1/purchases` with defaults (a consumable in Production) under `fields`;
  /// fails unless the fake answers 201.
  package func purchase(_ fields: [String: Any] = [:]) async throws -> Reply {
    var body: [String: Any] = [
      "bundle_id": Self.bundleId, "product_id": "gold.100", "type": "Consumable",
      "environment": "Production",
    ]
    body.merge(fields) { _, new in new }
    let reply = try await post("fake/v1/purchases", body)
    guard reply.status == 201 else {
      throw HarnessError(description: "purchase answered \(reply.status): \(reply.json)")
    }
    return reply
  }

  /// The receipt's verifyReceipt answer straight from the fake.
  package func verifyReceiptRaw(
    _ receipt: String, sandbox: Bool = false, extra: [String: Any] = [:]
  )
    async throws -> Reply
  {
    var body: [String: Any] = ["receipt-data": receipt]
    body.merge(extra) { _, new in new }
    return try await post(sandbox ? "sandbox/verifyReceipt" : "verifyReceipt", body)
  }

  // MARK: The AppStore module pointed at this fake

  /// A minute, not production's 10 s: the fake answers in this process, and on two cores a
  /// full parallel suite can hold it off the CPU for seconds. Tests of deadlines pass their own.
  package static let patientTimeout: Duration = .seconds(60)

  package func appStoreConfiguration(
    environments: Set<String> = ["Production", "Sandbox"], sharedSecret: String? = nil,
    timeout: Duration = FakeHarness.patientTimeout
  ) throws -> AppStoreConfiguration {
    guard let production = server.verifyReceiptURL, let sandbox = server.sandboxVerifyReceiptURL
    else { throw HarnessError(description: "fake not started") }
    var configuration = AppStoreConfiguration(bundleId: Self.bundleId)
    configuration.allowedEnvironments = environments
    configuration.extraRootCertificatesPEM = [server.rootCertificatePEM]
    configuration.verifyReceiptURL = production
    configuration.verifyReceiptSandboxURL = sandbox
    configuration.sharedSecret = sharedSecret
    configuration.receiptTimeout = timeout
    configuration.appAppleId = server.configuration.appAppleId
    return configuration
  }

  package func receiptVerifier(
    sharedSecret: String? = nil, timeout: Duration = FakeHarness.patientTimeout,
    transport: any ReceiptTransport = HTTPReceiptTransport()
  ) throws -> ReceiptVerifier {
    ReceiptVerifier(
      configuration: try appStoreConfiguration(sharedSecret: sharedSecret, timeout: timeout),
      transport: transport, logger: Self.quiet)
  }

  package func signedDataVerifier(environments: Set<String> = ["Production", "Sandbox"]) throws
    -> SignedDataVerifier
  {
    try SignedDataVerifier(configuration: appStoreConfiguration(environments: environments))
  }
}

/// The JWS payload, decoded without verification (to look at what was signed).
package func decodedPayload(_ jws: String) throws -> [String: Any] {
  let part = String(jws.split(separator: ".", omittingEmptySubsequences: false)[1])
  var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(
    of: "_", with: "/")
  base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
  guard let data = Data(base64Encoded: base64),
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
  else { throw FakeHarness.HarnessError(description: "payload is not a JSON object") }
  return object
}

/// A second HTTP server from the HTTP module, standing in for the app's notification URL.
package final class NotificationReceiver: Sendable {
  package final class Received: Sendable {
    private let bodies = Mutex<[[UInt8]]>([])
    /// Appends the body; returns how many have come, this one included.
    package func append(_ body: [UInt8]) -> Int {
      bodies.withLock {
        $0.append(body)
        return $0.count
      }
    }
    package var all: [[UInt8]] { bodies.withLock { $0 } }
  }

  package let url: URL
  private let received = Received()
  private let server: HTTPServer

  /// Answers the n-th notification with `statuses[n]`, and later ones with the last status.
  package init(statuses: [Int] = [200]) throws {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.eventLoopCount = 1
    configuration.shutdownGracePeriod = .seconds(1)
    var router = Router()
    let received = self.received
    router.add(.post, "/apple/notifications") { request, _ in
      let number = received.append(request.body)
      return Response(status: statuses[min(number, statuses.count) - 1])
    }
    server = HTTPServer(configuration: configuration, router: router, logger: FakeHarness.quiet)
    let port = try server.start()
    guard let url = URL(string: "http://127.0.0.1:\(port)/apple/notifications") else {
      throw FakeHarness.HarnessError(description: "bad receiver URL")
    }
    self.url = url
  }

  /// The `signedPayload` of every notification received, in order.
  package var signedPayloads: [String] {
    received.all.compactMap { body in
      ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any])?["signedPayload"]
        as? String
    }
  }

  package func stop() async { await server.shutdown() }

  /// A notification URL nothing answers. Not a stopped receiver's port: tests run in parallel
  /// and another test's server may be handed that port next. Port 9 (discard) lies below the
  /// kernel's ephemeral range, so no test server is given it, and nothing here listens on it.
  package static let unreachableURL = URL(string: "http://127.0.0.1:9/apple/notifications")!

  /// Runs `body` with a receiver listening, and stops it afterwards, even on failure.
  package static func with<T: Sendable>(
    statuses: [Int] = [200], _ body: (NotificationReceiver) async throws -> T
  ) async throws -> T {
    let receiver = try NotificationReceiver(statuses: statuses)
    do {
      let result = try await body(receiver)
      await receiver.stop()
      return result
    } catch {
      await receiver.stop()
      throw error
    }
  }
}
